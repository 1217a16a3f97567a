// ray-webhook's mutation and KubeRay 1.8's Pod webhook (node label delivery) on one worker, in either order:
// the worker reaches the head by its FQDN, named once in args[0], and KubeRay's webhook does not refuse it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ray_webhook/core/review/review_handler.h"
#include "support/base64_decode.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

constexpr const char* kFqdnAddress = "--address=raycluster-sample-head-svc.ns1.svc.cluster.local:6379";

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// A model of KubeRay 1.8's Pod webhook, from ray-operator/pkg/webhooks/v1/pod_webhook.go (KubeRay 1.8).
// Returns its refusal, or nullopt after changing the Pod as it does: args[0] must hold the exact text of env
// KUBERAY_GEN_RAY_START_CMD once; that text gets the node-label flags, and env RAY_NODE_LABELS_JSON is added.
std::optional<std::string> KubeRayNodeLabelWebhook(json& pod) {
  json& ray = pod["spec"]["containers"][0];
  for (const json& e : ray["env"]) {
    if (e["name"] == "RAY_NODE_LABELS_JSON") return std::nullopt;  // already prepared
  }
  std::string generated;
  for (const json& e : ray["env"]) {
    if (e["name"] == "KUBERAY_GEN_RAY_START_CMD") {
      generated = e.value("value", "");
      break;
    }
  }
  if (generated.empty()) return "no generated ray start command";
  if (!ray.contains("args") || ray["args"].size() != 1) return "args must have exactly one element";
  std::string args = ray["args"][0];
  const std::size_t n = Count(args, generated);
  if (n != 1) return "generated ray start command found " + std::to_string(n) + " times in args[0]";
  const std::string with_labels = "printf '%s\\n' \"$RAY_NODE_LABELS_JSON\" > /tmp/ray/node-labels.json; " + generated +
                                  " --labels-file=/tmp/ray/node-labels.json";
  args.replace(args.find(generated), generated.size(), with_labels);
  ray["args"][0] = args;
  ray["env"].push_back({{"name", "RAY_NODE_LABELS_JSON"},
                        {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.annotations['ray.io/node-labels']"}}}}}});
  return std::nullopt;
}

// ray-webhook's /mutate on the Pod, its patch applied as kube-apiserver applies it (RFC 6902).
json RayWebhook(const json& review_template, const json& pod) {
  json review = review_template;
  review["request"]["object"] = pod;
  ReviewDecoder decoder;
  PolicyConfig config;
  const ReviewOutcome out = HandleReview(review.dump(), Endpoint::kMutate, config, decoder);
  EXPECT_EQ(out.http_status, 200) << out.body;
  const json response = json::parse(out.body)["response"];
  EXPECT_EQ(response["allowed"], true) << response.dump();
  if (!response.contains("patch")) return pod;
  return pod.patch(json::parse(Base64Decode(response["patch"].get<std::string>()).value()));
}

class NodeLabelDelivery : public ::testing::Test {
 protected:
  const json review = json::parse(testing::ReadFixture("reviews/kuberay-1.8-worker-node-labels.json"));
  const json pod = review["request"]["object"];

  // Reached the head by its FQDN, named once, with KubeRay's labels delivered.
  static void ExpectReady(const json& worker) {
    const std::string args = worker["spec"]["containers"][0]["args"][0];
    EXPECT_EQ(Count(args, kFqdnAddress), 1u) << args;
    EXPECT_EQ(Count(args, "--address="), 1u) << args;
    EXPECT_EQ(Count(args, "--labels-file="), 1u) << args;
  }
};

TEST_F(NodeLabelDelivery, RayWebhookThenKubeRay) {
  json worker = RayWebhook(review, pod);
  ASSERT_NE(worker, pod) << "the fixture's bare --address must be rewritten";
  ASSERT_EQ(KubeRayNodeLabelWebhook(worker), std::nullopt);
  ExpectReady(worker);
  // reinvocationPolicy IfNeeded: ray-webhook called again after KubeRay changed args[0] changes nothing.
  EXPECT_EQ(RayWebhook(review, worker), worker);
}

TEST_F(NodeLabelDelivery, KubeRayThenRayWebhook) {
  json worker = pod;
  ASSERT_EQ(KubeRayNodeLabelWebhook(worker), std::nullopt);
  worker = RayWebhook(review, worker);
  ExpectReady(worker);
  EXPECT_EQ(RayWebhook(review, worker), worker);
}

TEST_F(NodeLabelDelivery, BothOrdersBuildTheSameWorker) {
  json first = RayWebhook(review, pod);
  ASSERT_EQ(KubeRayNodeLabelWebhook(first), std::nullopt);
  json second = pod;
  ASSERT_EQ(KubeRayNodeLabelWebhook(second), std::nullopt);
  second = RayWebhook(review, second);
  EXPECT_EQ(first, second);
}

// Why the env is rewritten: with args[0] qualified and the env left as the operator wrote it, KubeRay refuses.
TEST_F(NodeLabelDelivery, QualifyingArgsAloneWouldBeRefused) {
  json worker = RayWebhook(review, pod);
  for (json& e : worker["spec"]["containers"][0]["env"]) {
    if (e["name"] == "KUBERAY_GEN_RAY_START_CMD") {
      for (const json& original : pod["spec"]["containers"][0]["env"]) {
        if (original["name"] == "KUBERAY_GEN_RAY_START_CMD") e = original;
      }
    }
  }
  EXPECT_NE(KubeRayNodeLabelWebhook(worker), std::nullopt);
}

}  // namespace
}  // namespace ray_webhook
