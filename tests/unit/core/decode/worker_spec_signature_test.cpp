#include "core/decode/worker_spec_signature.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ray_webhook/core/decode/object_decoder.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

// A worker Pod as the API lists it, with what differs per Pod set from `node` and `token`.
json Worker(const std::string& token = "kube-api-access-h4n7c", const std::string& node = "a") {
  return {{"metadata", {{"name", "w-" + node}, {"uid", node}, {"labels", {{"ray.io/node-type", "worker"}}}}},
          {"spec",
           {{"nodeName", node},
            {"hostname", "host-" + node},
            {"subdomain", "sub-" + node},
            {"schedulingGates", json::array({{{"name", "gate-" + node}}})},
            {"ephemeralContainers", json::array({{{"name", "debugger-" + node}, {"image", "busybox"}}})},
            {"initContainers",
             {{{"name", "wait-gcs"},
               {"env", {{{"name", "TPU_NAME"}, {"value", "slice-" + node}}}},
               {"volumeMounts", {{{"name", token}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}}}}},
            {"containers",
             {{{"name", "ray-worker"},
               {"image", "rayproject/ray:2.46.0"},
               {"env",
                {{{"name", "TPU_WORKER_ID"}, {"value", node}},
                 {{"name", "TPU_WORKER_HOSTNAMES"}, {"value", "h-" + node}},
                 {{"name", "RAY_PORT"}, {"value", "6379"}}}},
               {"volumeMounts",
                {{{"name", "shared-mem"}, {"mountPath", "/dev/shm"}},
                 {{"name", token}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}}}}},
            {"volumes", {{{"name", "shared-mem"}, {"emptyDir", {{"medium", "Memory"}}}}, {{"name", token}}}}}},
          {"status", {{"phase", "Running"}, {"podIP", "10.0.0." + node}}}};
}

std::string Signature(const std::string& pod_json) {
  ObjectDecoder decoder;
  Pod pod;
  Status s = decoder.DecodePod(pod_json, pod);
  EXPECT_TRUE(s.ok()) << s.message();
  std::string out;
  s = decoder.WorkerSpecSignature(out);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}
std::string SignatureOf(const json& pod) { return Signature(pod.dump()); }

TEST(WorkerSpecSignature, WhatDiffersPerPodIsLeftOut) {
  EXPECT_EQ(SignatureOf(Worker("kube-api-access-h4n7c", "a")), SignatureOf(Worker("kube-api-access-t5v8r", "b")));
}

TEST(WorkerSpecSignature, EachPerPodFieldAloneIsLeftOut) {
  const std::string base = SignatureOf(Worker());
  for (const char* field : {"nodeName", "hostname", "subdomain", "schedulingGates", "ephemeralContainers"}) {
    SCOPED_TRACE(field);
    json other = Worker();
    other["spec"].erase(field);
    EXPECT_EQ(SignatureOf(other), base);
    EXPECT_EQ(base.find(std::string("\"") + field + "\""), std::string::npos) << base;
  }
  const auto same_with = [&](const std::function<void(json&)>& change) {
    json other = Worker();
    change(other["spec"]);
    return SignatureOf(other) == base;
  };
  EXPECT_TRUE(same_with([](json& s) { s["volumes"][1]["name"] = "kube-api-access-zz9zz"; }));
  EXPECT_TRUE(same_with([](json& s) { s["containers"][0]["volumeMounts"][1]["name"] = "kube-api-access-zz9zz"; }));
  EXPECT_TRUE(same_with([](json& s) { s["initContainers"][0]["volumeMounts"][0]["name"] = "kube-api-access-zz9zz"; }));
  EXPECT_TRUE(same_with([](json& s) { s["containers"][0]["env"][0]["value"] = "7"; }));
  EXPECT_TRUE(same_with([](json& s) { s["containers"][0]["env"][1]["value"] = "h-7"; }));
  EXPECT_TRUE(same_with([](json& s) { s["initContainers"][0]["env"][0]["value"] = "slice-7"; }));
  EXPECT_TRUE(same_with([](json& s) { s["containers"][0]["env"][0].erase("value"); }));
  EXPECT_NE(base.find(R"({"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","name":"kube-api-access"})"),
            std::string::npos)
      << base;
}

TEST(WorkerSpecSignature, ARealDifferenceShows) {
  const std::string base = SignatureOf(Worker());
  const auto differs_with = [&](const std::function<void(json&)>& change) {
    json other = Worker();
    change(other["spec"]);
    return SignatureOf(other) != base;
  };
  EXPECT_TRUE(differs_with([](json& s) { s["containers"][0]["image"] = "rayproject/ray:2.47.0"; }));
  EXPECT_TRUE(differs_with([](json& s) { s["containers"][0]["env"][2]["value"] = "6380"; }));
  EXPECT_TRUE(differs_with([](json& s) { s["containers"][0]["env"][2]["name"] = "TPU_WORKER_ID_X"; }));
  EXPECT_TRUE(differs_with(
      [](json& s) { s["containers"][0]["volumeMounts"].push_back(s["containers"][0]["volumeMounts"][0]); }));
  EXPECT_TRUE(differs_with([](json& s) { s["serviceAccountName"] = "other"; }));
  // Only the generated token volume name is left out: five lowercase letters or digits.
  EXPECT_TRUE(differs_with([](json& s) { s["volumes"][1]["name"] = "kube-api-access-ABCDE"; }));
  EXPECT_TRUE(differs_with([](json& s) { s["volumes"][1]["name"] = "kube-api-access-abcdef"; }));
  EXPECT_TRUE(differs_with([](json& s) { s["volumes"][1]["name"] = "my-token"; }));
  // Per-Pod names count elsewhere than in the spec's own fields.
  EXPECT_TRUE(differs_with([](json& s) { s["containers"][0]["nodeName"] = "x"; }));
}

TEST(WorkerSpecSignature, KeyOrderAndBlanksDoNotMatterAndTheTextIsSortedMinifiedJson) {
  const std::string a =
      Signature(R"({"spec": {"containers": [{"name": "w", "image": "i", "ports": [1, 2.50, true, null]}],
                                             "volumes": [], "restartPolicy": "Never"}, "metadata": {"name": "p"}})");
  const std::string b = Signature(R"({"metadata":{"name":"p"},"spec":{"restartPolicy":"Never","volumes":[],
                                             "containers":[{"ports":[1,2.50,true,null],"image":"i","name":"w"}]}})");
  EXPECT_EQ(a, b);
  EXPECT_EQ(
      a,
      R"({"containers":[{"image":"i","name":"w","ports":[1,2.50,true,null]}],"restartPolicy":"Never","volumes":[]})");
  EXPECT_NE(Signature(R"({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}})"),
            Signature(R"({"spec": {"containers": [{"name": "b"}, {"name": "a"}]}})"));
  EXPECT_EQ(json::parse(SignatureOf(Worker())).value("restartPolicy", "none"), "none");
}

TEST(WorkerSpecSignature, ARepeatedKeysLastValueCounts) {
  EXPECT_EQ(Signature(R"({"spec": {"restartPolicy": "Always", "restartPolicy": "Never"}})"),
            R"({"restartPolicy":"Never"})");
  EXPECT_EQ(Signature(R"({"spec": {"a": 1}, "spec": {"b": 2}})"), R"({"b":2})");
}

TEST(WorkerSpecSignature, APodWithoutSpecHasAnEmptyOne) {
  EXPECT_EQ(Signature(R"({"metadata": {"name": "p"}})"), "{}");
  EXPECT_EQ(Signature(R"({"spec": null})"), "{}");
}

TEST(WorkerSpecSignature, ThePodsViewsStayValid) {
  ObjectDecoder decoder;
  Pod pod;
  const std::string text = Worker().dump();
  ASSERT_TRUE(decoder.DecodePod(text, pod).ok());
  std::string signature;
  ASSERT_TRUE(decoder.WorkerSpecSignature(signature).ok());
  EXPECT_EQ(pod.metadata.name, "w-a");
  EXPECT_EQ(Lookup(pod.metadata.labels, "ray.io/node-type"), "worker");
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].name, "ray-worker");
  EXPECT_EQ(pod.containers[0].env[2].value, "6379");
  EXPECT_EQ(pod.phase, "Running");
  // Asked twice, the same.
  std::string again;
  ASSERT_TRUE(decoder.WorkerSpecSignature(again).ok());
  EXPECT_EQ(again, signature);
}

TEST(WorkerSpecSignature, OnlyAfterAPodWasDecoded) {
  ObjectDecoder decoder;
  std::string out;
  EXPECT_FALSE(decoder.WorkerSpecSignature(out).ok());
  Pod pod;
  EXPECT_FALSE(decoder.DecodePod(R"({"metadata": {"labels": {"a": 1}}})", pod).ok());
  EXPECT_FALSE(decoder.WorkerSpecSignature(out).ok());
  RayObject cluster;
  ASSERT_TRUE(decoder.DecodeRayObject(R"({"metadata": {"name": "c"}})", RayObjectKind::kRayCluster, cluster).ok());
  EXPECT_FALSE(decoder.WorkerSpecSignature(out).ok());
}

TEST(WorkerSpecSignature, NestingIsBounded) {
  std::string deep = R"({"spec": {"a": )";
  for (std::size_t i = 0; i < kMaxSignatureDepth + 1; ++i) deep += "[";
  for (std::size_t i = 0; i < kMaxSignatureDepth + 1; ++i) deep += "]";
  deep += "}}";
  ObjectDecoder decoder;
  Pod pod;
  ASSERT_TRUE(decoder.DecodePod(deep, pod).ok());
  std::string out;
  EXPECT_EQ(decoder.WorkerSpecSignature(out).message(), "spec: nested deeper than 128 levels");
}

}  // namespace
}  // namespace ray_webhook
