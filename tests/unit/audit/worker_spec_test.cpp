#include "audit/worker_spec.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

using nlohmann::json;

json Worker(const std::string& token, const std::string& node) {
  return {{"metadata", {{"name", "w-" + node}, {"uid", node}}},
          {"spec",
           {{"nodeName", node},
            {"containers",
             {{{"name", "ray-worker"},
               {"env", {{{"name", "TPU_WORKER_ID"}, {"value", node}}, {{"name", "RAY_PORT"}, {"value", "6379"}}}},
               {"volumeMounts",
                {{{"name", "shared-mem"}, {"mountPath", "/dev/shm"}},
                 {{"name", token}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}}}}},
            {"volumes", {{{"name", "shared-mem"}}, {{"name", token}}}}}},
          {"status", {{"phase", node}}}};
}

TEST(WorkerSpec, PerPodFieldsAreLeftOut) {
  EXPECT_EQ(WorkerSpecOf(Worker("kube-api-access-h4n7c", "a")), WorkerSpecOf(Worker("kube-api-access-t5v8r", "b")));
  EXPECT_FALSE(WorkerSpecOf(Worker("kube-api-access-h4n7c", "a")).contains("nodeName"));
}

TEST(WorkerSpec, OnlyTheGeneratedTokenVolumeNameIsLeftOut) {
  EXPECT_NE(WorkerSpecOf(Worker("my-token", "a")), WorkerSpecOf(Worker("other-token", "a")));
  EXPECT_NE(WorkerSpecOf(Worker("kube-api-access-ABCDE", "a")), WorkerSpecOf(Worker("kube-api-access-abcde", "a")));
}

TEST(WorkerSpec, OtherEnvValuesCount) {
  json a = Worker("kube-api-access-h4n7c", "a"), b = a;
  b["spec"]["containers"][0]["env"][1]["value"] = "6380";
  EXPECT_EQ(SpecDifferences(WorkerSpecOf(a), WorkerSpecOf(b), 4),
            std::vector<std::string>{"spec.containers[0].env[1].value (changed)"});
}

TEST(WorkerSpec, DifferencesAreBoundedAndNamedAsKubectlNamesThem) {
  json a = WorkerSpecOf(Worker("kube-api-access-h4n7c", "a")), b = a;
  b["containers"][0]["volumeMounts"].insert(b["containers"][0]["volumeMounts"].begin() + 1,
                                            json{{"name", "shared-mem"}, {"mountPath", "/dev/shm"}});
  b["containers"][0]["image"] = "x";
  b.erase("volumes");
  b["a/b"] = 1;
  EXPECT_EQ(SpecDifferences(a, b, 10),
            (std::vector<std::string>{"spec.containers[0].volumeMounts[1] (added)", "spec.containers[0].image (added)",
                                      "spec.volumes (removed)", "spec.a/b (added)"}));
  EXPECT_EQ(SpecDifferences(a, b, 2), (std::vector<std::string>{"spec.containers[0].volumeMounts[1] (added)",
                                                                "spec.containers[0].image (added)", "..."}));
  json c = a;
  c["containers"][0]["volumeMounts"].erase(0);
  EXPECT_EQ(SpecDifferences(a, c, 4), std::vector<std::string>{"spec.containers[0].volumeMounts[0] (removed)"});
}

TEST(WorkerSpec, APodWithoutSpecIsEmpty) {
  EXPECT_EQ(WorkerSpecOf(json{{"metadata", json::object()}}), json::object());
}

}  // namespace
}  // namespace ray_webhook
