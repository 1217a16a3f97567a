#include "audit/spec_differences.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

using nlohmann::json;

// A worker's spec as its signature reads: per-Pod fields already out.
json WorkerSpec() {
  return {{"containers",
           {{{"name", "ray-worker"},
             {"env", {{{"name", "TPU_WORKER_ID"}}, {{"name", "RAY_PORT"}, {"value", "6379"}}}},
             {"volumeMounts",
              {{{"name", "shared-mem"}, {"mountPath", "/dev/shm"}},
               {{"name", "kube-api-access"}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}}}}},
          {"volumes", {{{"name", "shared-mem"}}, {{"name", "kube-api-access"}}}}};
}

TEST(SpecDifferences, AChangedValueIsNamedByItsPath) {
  json a = WorkerSpec(), b = a;
  b["containers"][0]["env"][1]["value"] = "6380";
  EXPECT_EQ(SpecDifferences(a, b, 4), std::vector<std::string>{"spec.containers[0].env[1].value (changed)"});
  EXPECT_TRUE(SpecDifferences(a, a, 4).empty());
}

TEST(SpecDifferences, DifferencesAreBoundedAndNamedAsKubectlNamesThem) {
  json a = WorkerSpec(), b = a;
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

}  // namespace
}  // namespace ray_webhook
