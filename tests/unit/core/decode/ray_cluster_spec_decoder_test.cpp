#include "core/decode/ray_cluster_spec_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;
using testing::ReviewObject;

JsonReader DecodeSpec(BareObject& bare, const nlohmann::json& spec, RayClusterSpecView* out) {
  *out = {};
  return bare.Walk(spec.dump(), [&](od::object root, JsonReader& r) { DecodeClusterSpec(root, r, *out); });
}

TEST(RayClusterSpecDecoder, DecodesTheFieldsTheTemplateRulesRead) {
  BareObject bare;
  RayClusterSpecView spec;
  const JsonReader r = DecodeSpec(bare, ReviewObject("reviews/raycluster-token-dupmount.json")["spec"], &spec);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_TRUE(spec.K8sTokenAuth());
  EXPECT_FALSE(spec.enable_in_tree_autoscaling);
  ASSERT_TRUE(spec.has_head_group);
  EXPECT_EQ(spec.head_group.group_name, "");
  ASSERT_EQ(spec.head_group.template_pod.containers.size(), 1u);
  EXPECT_EQ(spec.head_group.template_pod.containers[0].name, "ray-head");
  ASSERT_EQ(spec.worker_groups.size(), 1u);
  const RayGroupSpec& w = spec.worker_groups[0];
  EXPECT_EQ(w.group_name, "workergroup");
  ASSERT_EQ(w.template_pod.containers.size(), 1u);
  ASSERT_EQ(w.template_pod.containers[0].volume_mounts.size(), 1u);
  EXPECT_EQ(w.template_pod.containers[0].volume_mounts[0].mount_path, "/var/run/secrets/ray.io/serviceaccount");
}

TEST(RayClusterSpecDecoder, ReadsTheOptionsKubeRayAddsToThePodsFor) {
  BareObject bare;
  RayClusterSpecView spec;
  const nlohmann::json options = {
      {"enableInTreeAutoscaling", true},
      {"autoscalerOptions", {{"volumeMounts", {{{"name", "logs"}, {"mountPath", "/tmp/ray"}}}}}},
      {"tlsOptions", {{"enabled", true}}},
      {"headGroupSpec", {{"rayStartParams", {{"num-cpus", "0"}}}}}};
  ASSERT_FALSE(DecodeSpec(bare, options, &spec).failed());
  EXPECT_TRUE(spec.enable_in_tree_autoscaling);
  ASSERT_EQ(spec.autoscaler_volume_mounts.size(), 1u);
  EXPECT_EQ(spec.autoscaler_volume_mounts[0].mount_path, "/tmp/ray");
  EXPECT_TRUE(spec.tls_enabled);
  EXPECT_EQ(Lookup(spec.head_group.ray_start_params, "num-cpus"), "0");
}

// Paths are relative to the spec, with the group and template spelled out.
TEST(RayClusterSpecDecoder, ErrorsAreRelativeToTheSpec) {
  BareObject bare;
  RayClusterSpecView spec;
  nlohmann::json bad = ReviewObject("reviews/raycluster-token-dupmount.json")["spec"];
  bad["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = 1;
  EXPECT_EQ(DecodeSpec(bare, bad, &spec).error(),
            "workerGroupSpecs[0].template.spec.containers[0].volumeMounts[].mountPath: expected a string");
  bad["headGroupSpec"]["rayStartParams"] = {{"num-cpus", 0}};
  EXPECT_EQ(DecodeSpec(bare, bad, &spec).error(), "headGroupSpec.rayStartParams: expected string values");
  EXPECT_EQ(DecodeSpec(bare, {{"enableInTreeAutoscaling", "yes"}}, &spec).error(),
            "enableInTreeAutoscaling: expected a boolean");
  EXPECT_EQ(DecodeSpec(bare, {{"authOptions", {{"enableK8sTokenAuth", "true"}}}}, &spec).error(),
            "authOptions.enableK8sTokenAuth: expected a boolean");
  EXPECT_EQ(DecodeSpec(bare, {{"autoscalerOptions", {{"volumeMounts", {{{"name", 1}}}}}}}, &spec).error(),
            "autoscalerOptions.volumeMounts[].name: expected a string");
  EXPECT_EQ(DecodeSpec(bare, {{"workerGroupSpecs", {1}}}, &spec).error(),
            "workerGroupSpecs: expected an array of objects");
}

}  // namespace
}  // namespace ray_webhook
