// ReleaseFollower against mock-kube-api over real TLS: the operator's
// Deployment listed, then changed, scaled away and made ambiguous by watch
// events; what the observer was told, in order.
#include "ray_webhook/operator_release/release_follower.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/mock_kube_api_dir.h"
#include "support/mock_kube_api_process.h"
#include "support/scripted_watch.h"

namespace ray_webhook {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Json = nlohmann::ordered_json;
using testing_support::HangStep;
using testing_support::WatchEvent;

constexpr char kToken[] = "release-token-0123456789";

Json Deployment(const std::string& name, const std::string& image, const std::string& version,
                Json args = Json::array(), const std::string& container = "kuberay-operator") {
  return {{"kind", "Deployment"},
          {"apiVersion", "apps/v1"},
          {"metadata",
           {{"name", name},
            {"namespace", "ray-system"},
            {"resourceVersion", version},
            {"labels", {{"app.kubernetes.io/name", "kuberay-operator"}}}}},
          {"spec",
           {{"replicas", 1},
            {"template", {{"spec", {{"containers", {{{"name", container}, {"image", image}, {"args", args}}}}}}}}}}};
}

class Recorder : public ReleaseObserver {
 public:
  void ReleaseChosen(const ReleaseChoice& c) override {
    std::lock_guard<std::mutex> lock(mutex_);
    chosen_.push_back(std::string(ReleaseSourceName(c.source)) + " " + ShowKubeRayVersion(c.target.version) +
                      (c.target.GateEnabled("RayCronJob") ? " cron" : ""));
  }
  void WatchProblem(std::string_view resource, std::string_view problem) override {
    std::lock_guard<std::mutex> lock(mutex_);
    problems_.push_back(std::string(resource) + " " + std::string(problem));
  }
  std::vector<std::string> chosen() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return chosen_;
  }
  std::vector<std::string> problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> chosen_, problems_;
};

class ReleaseFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    dir_ = testing_support::MockKubeApiDir::Create("release-follower-test", kToken, &error);
    ASSERT_TRUE(dir_) << error;
  }
  void TearDown() override {
    follower_.reset();
    mock_.reset();
  }

  void Start(const std::vector<Json>& objects, const std::vector<std::vector<Json>>& watches) {
    std::string error;
    fs::path log;
    mock_ = testing_support::StartScriptedMock(*dir_, "release", Json{{"items", objects}}, Json{{"watches", watches}},
                                               &log, &error);
    ASSERT_TRUE(mock_) << error;
    client_ = std::make_unique<KubeApiClient>(dir_->Config(mock_->port()));
    ReleaseFollowerOptions o;
    o.namespace_name = "ray-system";
    o.watch.initial_backoff = 100ms;
    o.watch.max_backoff = 400ms;
    o.watch.stop_check = 50ms;
    KubeRayTarget fixed;
    fixed.version = {1, 5, 1};
    follower_ = std::make_unique<ReleaseFollower>(*client_, o, fixed, recorder_);
    follower_->Start();
  }

  bool Eventually(std::size_t choices) const {
    return testing_support::Eventually([&] { return recorder_.chosen().size() >= choices; });
  }

  std::unique_ptr<testing_support::MockKubeApiDir> dir_;
  std::unique_ptr<testing_support::MockKubeApiProcess> mock_;
  std::unique_ptr<KubeApiClient> client_;
  Recorder recorder_;
  std::unique_ptr<ReleaseFollower> follower_;
};

TEST_F(ReleaseFollowerTest, FollowsTheOperatorsDeploymentThroughAnUpgradeAScaleDownAndASecondOperator) {
  const Json v162 = Deployment("kuberay-operator", "quay.io/kuberay/operator:v1.6.2", "10");
  Json stopped = Deployment("kuberay-operator", "quay.io/kuberay/operator:v1.7.0", "12",
                            Json::array({"--feature-gates=RayCronJob=true"}));
  stopped["spec"]["replicas"] = 0;
  const Json hang = HangStep();
  Start({v162, Deployment("unrelated", "nginx:1.27", "9", Json::array(), "web")},
        {{WatchEvent("MODIFIED", Deployment("kuberay-operator", "quay.io/kuberay/operator:v1.7.0", "11",
                                            Json::array({"--feature-gates=RayCronJob=true"}))),
          {{"sleep_ms", 200}},
          WatchEvent("MODIFIED", stopped),
          {{"sleep_ms", 200}},
          WatchEvent("ADDED", Deployment("second", "quay.io/kuberay/operator:v1.6.2", "13")),
          WatchEvent("ADDED", Deployment("third", "quay.io/kuberay/operator:v1.7.0", "14")),
          {{"sleep_ms", 200}},
          WatchEvent("DELETED", Deployment("third", "quay.io/kuberay/operator:v1.7.0", "15")),
          hang}});
  ASSERT_TRUE(Eventually(6)) << ::testing::PrintToString(recorder_.chosen());
  EXPECT_EQ(recorder_.chosen(), (std::vector<std::string>{"operator 1.6.2", "operator 1.7.0 cron", "no_operator 1.5.1",
                                                          "operator 1.6.2", "ambiguous 1.5.1", "operator 1.6.2"}));
  EXPECT_EQ(follower_->Choice().detail,
            "KubeRay 1.6.2 from Deployment ray-system/second (image quay.io/kuberay/operator:v1.6.2)");
  EXPECT_TRUE(recorder_.problems().empty()) << ::testing::PrintToString(recorder_.problems());
}

TEST_F(ReleaseFollowerTest, BeforeTheFirstListTheFixedReleaseHoldsAndWatchProblemsAreCounted) {
  const Json hang = HangStep();
  Start({Deployment("kuberay-operator", "quay.io/kuberay/operator:latest", "10")}, {{{{"raw", "not json"}}}, {hang}});
  EXPECT_EQ(follower_->Choice().source == ReleaseSource::kNotListedYet ||
                follower_->Choice().source == ReleaseSource::kNotARelease,
            true);
  ASSERT_TRUE(Eventually(1));
  EXPECT_EQ(recorder_.chosen(), std::vector<std::string>{"not_a_release 1.5.1"});
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       recorder_.problems().empty() && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(recorder_.problems(), std::vector<std::string>{"deployments bad_event"});
}

}  // namespace
}  // namespace ray_webhook
