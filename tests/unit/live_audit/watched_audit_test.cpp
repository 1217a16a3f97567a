// WatchedAudit against mock-kube-api (tests/tools/mock_kube_api.cpp) over real
// TLS: the mock serves the extra-head fixture's objects and plays a watch
// script per resource; the test reads what the audit put in its gauges and
// the mock's request log.
#include "ray_webhook/live_audit/watched_audit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>
#include <vector>

#include "support/fixture_files.h"
#include "support/mock_kube_api_dir.h"
#include "support/mock_kube_api_process.h"
#include "support/scripted_watch.h"

namespace ray_webhook {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;
using testing_support::Eventually;
using testing_support::ExpiredEvent;
using testing_support::HangStep;
using testing_support::WatchEvent;

constexpr char kToken[] = "watched-audit-token-0123456789";

class RecordingGauges : public AuditGauges {
 public:
  void SetAuditResult(const AuditReport& report, double) override {
    std::lock_guard<std::mutex> lock(mutex_);
    extra_heads_.push_back(report.clusters_with_extra_heads);
    last_ = report;
  }
  void CountAuditFailure() override {}
  void CountWatchProblem(std::string_view resource, std::string_view problem) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++problems_[std::string(resource) + " " + std::string(problem)];
  }

  std::vector<std::size_t> extra_heads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return extra_heads_;
  }
  AuditReport last() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_;
  }
  std::size_t problems(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = problems_.find(key);
    return it == problems_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::size_t> extra_heads_;
  AuditReport last_;
  std::map<std::string, std::size_t> problems_;
};

class WatchedAuditTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    dir_ = testing_support::MockKubeApiDir::Create("watched-audit-test", kToken, &error);
    ASSERT_TRUE(dir_) << error;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  void TearDown() override {
    if (audit_) audit_->Stop();
  }

  // The fixture's objects without the second live head, which the watches add.
  static Json Objects() {
    Json dump = Json::parse(testing::ReadFixture("audit/extra-head.json"));
    Json items = Json::array();
    for (Json& item : dump["items"]) {
      if (item["metadata"]["name"] == "raycluster-sample-head-x7k2p") {
        second_head_ = item;
        continue;
      }
      items.push_back(item);
    }
    return {{"items", items}, {"unserved", {"rayjobs"}}};
  }

  void Start(const Json& pod_watches, std::function<const PolicyConfig*()> policy = {}) {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string error;
    mock_ = testing_support::StartScriptedMock(*dir_, name, Objects(), Json{{"by_resource", {{"pods", pod_watches}}}},
                                               &log_, &error);
    ASSERT_TRUE(mock_) << error;
    client_ = std::make_unique<KubeApiClient>(dir_->Config(mock_->port()));
    WatchedAuditOptions o;
    o.settle = 100ms;
    o.watch.initial_backoff = 100ms;
    o.watch.max_backoff = 400ms;
    o.watch.stop_check = 50ms;
    if (!policy) policy = [this] { return &policy_; };
    audit_ = std::make_unique<WatchedAudit>(*client_, std::move(policy), gauges_, o);
    audit_->Start();
  }

  // Lists (not watches) of a path, from the mock's log.
  std::size_t Lists(const std::string& path) const {
    std::ifstream in(log_);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("GET " + path + " ") && line.find(" watch=1") == std::string::npos) ++n;
    }
    return n;
  }

  static inline std::unique_ptr<testing_support::MockKubeApiDir> dir_;
  static inline Json second_head_;
  fs::path log_;
  std::unique_ptr<testing_support::MockKubeApiProcess> mock_;
  std::unique_ptr<KubeApiClient> client_;
  PolicyConfig policy_;
  RecordingGauges gauges_;
  std::unique_ptr<WatchedAudit> audit_;
};

TEST_F(WatchedAuditTest, AFindingAppearsAndClearsWithTheWatchedChanges) {
  Objects();
  const Json pause = {{"sleep_ms", 1500}};
  Start(Json::array({Json::array({WatchEvent("ADDED", second_head_), pause}),
                     Json::array({WatchEvent("DELETED", second_head_), HangStep()})}));
  // Listed and judged: one live head.
  ASSERT_TRUE(Eventually([&] { return !gauges_.extra_heads().empty(); }));
  EXPECT_EQ(gauges_.extra_heads().front(), 0u);
  ASSERT_TRUE(Eventually([&] {
    const auto seen = gauges_.extra_heads();
    return std::find(seen.begin(), seen.end(), 1u) != seen.end();
  }));
  ASSERT_TRUE(Eventually([&] { return gauges_.extra_heads().back() == 0u; }));
  const AuditReport last = gauges_.last();
  EXPECT_EQ(last.pods, 5u);  // the fixture's six Pods less the second head
  EXPECT_EQ(last.ray_clusters, 1u);
  // One list of each collection: the changes came by the watch.
  EXPECT_EQ(Lists("/api/v1/pods"), 1u);
  EXPECT_EQ(Lists("/apis/ray.io/v1/rayclusters"), 1u);
}

TEST_F(WatchedAuditTest, ACollectionNotServedCountsAsEmptyAndIsTriedAgain) {
  Start(Json::array());
  ASSERT_TRUE(Eventually([&] { return !gauges_.extra_heads().empty(); }));
  EXPECT_EQ(gauges_.last().ray_jobs, 0u);
  EXPECT_EQ(gauges_.problems("rayjobs list_failed"), 0u);
  ASSERT_TRUE(Eventually([&] { return Lists("/apis/ray.io/v1/rayjobs") >= 2; }));
}

TEST_F(WatchedAuditTest, AGoneVersionIsListedAgainAndTheViewFollowsTheList) {
  Objects();
  // The first watch: 410. The list after it holds the second head, made while no watch ran.
  Start(Json::array({Json::array({{{"apply", {{"type", "ADDED"}, {"object", second_head_}}}}, ExpiredEvent()}),
                     Json::array({HangStep()})}));
  ASSERT_TRUE(Eventually([&] { return Lists("/api/v1/pods") >= 2; }));
  ASSERT_TRUE(Eventually([&] { return gauges_.last().clusters_with_extra_heads == 1u; }));
  EXPECT_GE(gauges_.problems("pods expired"), 1u);
}

TEST_F(WatchedAuditTest, AnUnreadableObjectIsCountedAndLeftOut) {
  Objects();
  Json bad = second_head_;
  bad["spec"]["containers"] = "not a list";
  Start(Json::array({Json::array({WatchEvent("ADDED", bad), HangStep()})}));
  ASSERT_TRUE(Eventually([&] { return gauges_.problems("pods unreadable_object") == 1u; }));
  ASSERT_TRUE(Eventually([&] { return !gauges_.extra_heads().empty(); }));
  EXPECT_EQ(gauges_.last().clusters_with_extra_heads, 0u);
}

TEST_F(WatchedAuditTest, AnotherPolicyListsEverythingAgain) {
  PolicyConfig first, second;
  std::atomic<const PolicyConfig*> in_force{&first};
  Start(Json::array(), [&] { return in_force.load(); });
  ASSERT_TRUE(Eventually([&] { return !gauges_.extra_heads().empty(); }));
  ASSERT_EQ(Lists("/apis/ray.io/v1/rayclusters"), 1u);
  in_force = &second;
  ASSERT_TRUE(Eventually([&] { return Lists("/apis/ray.io/v1/rayclusters") == 2u && Lists("/api/v1/pods") == 2u; }));
  const std::size_t judged = gauges_.extra_heads().size();
  ASSERT_TRUE(Eventually([&] { return gauges_.extra_heads().size() > judged; }));
  EXPECT_EQ(gauges_.last().pods, 5u);
  audit_->Stop();  // before the policies it reads go
}

}  // namespace
}  // namespace ray_webhook
