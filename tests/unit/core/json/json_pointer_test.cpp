#include "ray_webhook/core/json/json_pointer.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

// RFC 6901 section 3: "~" is written "~0" and "/" is written "~1".
TEST(JsonPointer, EscapesTildeBeforeSlash) {
  EXPECT_EQ(EscapeJsonPointerSegment("ray.io/cluster"), "ray.io~1cluster");
  EXPECT_EQ(EscapeJsonPointerSegment("a~b"), "a~0b");
  EXPECT_EQ(EscapeJsonPointerSegment("~1"), "~01");
}

TEST(JsonPointer, JoinsSegments) {
  EXPECT_EQ(JsonPointer({"spec", "containers", "0", "env", "-"}), "/spec/containers/0/env/-");
  EXPECT_EQ(JsonPointer({"metadata", "labels", "ray.io/cluster"}), "/metadata/labels/ray.io~1cluster");
}

}  // namespace
}  // namespace ray_webhook
