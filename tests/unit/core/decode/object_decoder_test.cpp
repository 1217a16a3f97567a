#include "ray_webhook/core/decode/object_decoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::ReviewObject;

TEST(ObjectDecoder, DecodesABarePodAsTheReviewDecoderDecodesRequestObject) {
  ObjectDecoder decoder;
  const std::string json = ReviewObject("reviews/kuberay-1.0-worker-short.json").dump();
  Pod pod;
  const Status s = decoder.DecodePod(json, pod);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Lookup(pod.metadata.labels, "ray.io/node-type"), "worker");
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "ray-worker");
}

TEST(ObjectDecoder, DecodesABareRayObjectOfTheKindGiven) {
  ObjectDecoder decoder;
  const std::string json = ReviewObject("reviews/rayjob-dupmount.json").dump();
  RayObject job;
  const Status s = decoder.DecodeRayObject(json, RayObjectKind::kRayJob, job);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(job.kind, RayObjectKind::kRayJob);
  ASSERT_TRUE(job.cluster);
  EXPECT_EQ(job.cluster->worker_groups.at(0).group_name, "small-group");
}

// No AdmissionReview around the object, so no "request.object." in its paths.
TEST(ObjectDecoder, ErrorPathsAreRelativeToTheObject) {
  ObjectDecoder decoder;
  nlohmann::json cluster = ReviewObject("reviews/raycluster-token-dupmount.json");
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["name"] = 1;
  RayObject o;
  EXPECT_EQ(decoder.DecodeRayObject(cluster.dump(), RayObjectKind::kRayCluster, o).message(),
            "spec.headGroupSpec.template.spec.containers[0].name: expected a string");
  Pod pod;
  EXPECT_EQ(decoder.DecodePod(R"({"metadata":{"labels":{"a":1}}})", pod).message(),
            "metadata.labels: expected string values");
}

TEST(ObjectDecoder, ABodyThatIsNoObjectIsAnError) {
  ObjectDecoder decoder;
  Pod pod;
  EXPECT_EQ(decoder.DecodePod("", pod).message(), "empty; expected a JSON object");
  EXPECT_EQ(decoder.DecodePod("[]", pod).message(), "not a JSON object");
  for (const std::string json : {"{", R"({"metadata":{})", R"({"spec":{"containers":[{"name":"x"}}})", "{} {}"}) {
    SCOPED_TRACE(json);
    const Status s = decoder.DecodePod(json, pod);
    EXPECT_EQ(s.message().rfind("not valid JSON: ", 0), 0u) << s.message();
  }
  // Still usable after every failure.
  EXPECT_TRUE(decoder.DecodePod(R"({"metadata":{"name":"p"}})", pod).ok());
  EXPECT_EQ(pod.metadata.name, "p");
}

}  // namespace
}  // namespace ray_webhook
