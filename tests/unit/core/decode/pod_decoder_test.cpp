#include "core/decode/pod_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;
using testing::ReviewObject;

JsonReader DecodeBarePod(BareObject& bare, const std::string& json, Pod* pod) {
  return bare.Walk(json, [&](od::object root, JsonReader& r) { DecodePod(root, r, *pod); });
}

TEST(PodDecoder, DecodesTheFieldsTheRulesRead) {
  BareObject bare;
  Pod pod;
  const JsonReader r = DecodeBarePod(bare, ReviewObject("reviews/kuberay-1.0-worker-short.json").dump(), &pod);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_EQ(pod.metadata.generate_name, "raycluster-kuberay-workergroup-worker-");
  EXPECT_EQ(Lookup(pod.metadata.labels, "ray.io/node-type"), "worker");
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "ray-worker");
  ASSERT_EQ(pod.init_containers.size(), 1u);
  EXPECT_FALSE(pod.init_containers[0].has_env_list);
  EXPECT_TRUE(pod.ephemeral_containers.empty());
}

// Paths are relative to the Pod; its caller says where the Pod is.
TEST(PodDecoder, ErrorsAreRelativeToThePod) {
  BareObject bare;
  Pod pod;
  nlohmann::json object = ReviewObject("reviews/kuberay-1.0-worker-short.json");
  object["spec"]["initContainers"][0]["name"] = 5;
  EXPECT_EQ(DecodeBarePod(bare, object.dump(), &pod).error(), "spec.initContainers[0].name: expected a string");
  object["spec"] = "oops";
  EXPECT_EQ(DecodeBarePod(bare, object.dump(), &pod).error(), "spec: expected an object");
  EXPECT_EQ(DecodeBarePod(bare, R"({"spec":{"ephemeralContainers":[{"command":[1]}]}})", &pod).error(),
            "spec.ephemeralContainers[0].command: expected an array of strings");
}

// Decoding into the Pod of the previous object keeps nothing of it.
TEST(PodDecoder, NothingOfThePreviousPodSurvives) {
  BareObject bare;
  Pod pod;
  ASSERT_FALSE(DecodeBarePod(bare, ReviewObject("reviews/kuberay-1.0-worker-short.json").dump(), &pod).failed());
  ASSERT_FALSE(DecodeBarePod(bare, R"({"metadata":{"name":"bare"}})", &pod).failed());
  EXPECT_EQ(pod.metadata.name, "bare");
  EXPECT_EQ(pod.metadata.generate_name, "");
  EXPECT_TRUE(pod.metadata.labels.empty());
  EXPECT_TRUE(pod.containers.empty());
  EXPECT_TRUE(pod.init_containers.empty());
}

// What the audit of existing Pods reads: the phase and whether the Pod is being deleted. A status of
// the wrong type is no error, since admission never judges it.
TEST(PodDecoder, ReadsThePhaseAndTheDeletionLeniently) {
  BareObject bare;
  Pod pod;
  ASSERT_FALSE(DecodeBarePod(bare, R"({"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},
      "status":{"phase":"Failed","podIP":"10.0.0.1"}})",
                             &pod)
                   .failed());
  EXPECT_EQ(pod.phase, "Failed");
  EXPECT_TRUE(pod.metadata.deletion_requested);
  ASSERT_FALSE(DecodeBarePod(bare, R"({"metadata":{"deletionTimestamp":null},"status":{"phase":7}})", &pod).failed());
  EXPECT_EQ(pod.phase, "");
  EXPECT_FALSE(pod.metadata.deletion_requested);
  ASSERT_FALSE(DecodeBarePod(bare, R"({"metadata":{"name":"p"},"status":"oops"})", &pod).failed());
  ASSERT_FALSE(DecodeBarePod(bare, R"({"status":{"phase":"Running"}})", &pod).failed());
  EXPECT_EQ(pod.phase, "Running");
  ASSERT_FALSE(DecodeBarePod(bare, R"({"metadata":{"name":"p"}})", &pod).failed());
  EXPECT_EQ(pod.phase, "");
}

// A repeated key counts with its last value, as in Go's encoding/json.
TEST(PodDecoder, ARepeatedContainersListCountsWithTheLast) {
  BareObject bare;
  Pod pod;
  ASSERT_FALSE(
      DecodeBarePod(bare, R"({"spec":{"containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"c"}]}})", &pod)
          .failed());
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "c");
}

// A Pod under admission pays for no field its rules do not read: resources are a template's alone.
TEST(PodDecoder, APodKeepsNoResourcesAndItsCreationTime) {
  BareObject bare;
  Pod pod;
  nlohmann::json p = ReviewObject("reviews/kuberay-1.0-worker-short.json");
  p["metadata"]["creationTimestamp"] = "2026-12-01T10:16:02Z";
  p["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "1"}}}};
  ASSERT_FALSE(DecodeBarePod(bare, p.dump(), &pod).failed());
  EXPECT_TRUE(pod.containers.at(0).requests.empty());
  EXPECT_EQ(pod.metadata.creation_timestamp, "2026-12-01T10:16:02Z");
  p["metadata"].erase("creationTimestamp");
  ASSERT_FALSE(DecodeBarePod(bare, p.dump(), &pod).failed());
  EXPECT_TRUE(pod.metadata.creation_timestamp.empty());
}

}  // namespace
}  // namespace ray_webhook
