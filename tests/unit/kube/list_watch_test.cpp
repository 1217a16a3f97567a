// ListWatch against mock-kube-api (tests/tools/mock_kube_api.cpp) over real
// TLS: each test writes the mock's objects and watch script
// (tests/tools/mock_kube_watch.h), starts a mock of its own, runs ListWatch on
// a thread and reads what the sink saw, ListWatch's stats and the mock's
// request log.
#include "ray_webhook/kube/list_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

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

constexpr char kToken[] = "watch-token-0123456789";

Json Pod(const std::string& name, const std::string& version) {
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"resourceVersion", version}}}};
}

Json Bookmark(const std::string& version) {
  return WatchEvent("BOOKMARK", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", version}}}});
}

// What a consumer keeps: the objects by name, replaced whole by each list, and what it was told, in order.
class RecordingSink : public WatchSink {
 public:
  void OnListBegin() override {
    std::lock_guard<std::mutex> lock(mutex_);
    listing_.clear();
    seen_.push_back("begin");
  }
  void OnListed(std::string_view object) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const Json o = Json::parse(object);
    listing_[o["metadata"]["name"]] = std::string(object);
    seen_.push_back("listed " + o["metadata"]["name"].get<std::string>());
  }
  void OnListEnd(std::string_view version) override {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_ = listing_;
    seen_.push_back("end " + std::string(version));
  }
  void OnEvent(WatchEventType type, std::string_view object) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const Json o = Json::parse(object);
    const std::string name = o["metadata"]["name"];
    if (type == WatchEventType::kDeleted) {
      objects_.erase(name);
    } else {
      objects_[name] = std::string(object);
    }
    const char* kind = type == WatchEventType::kAdded      ? "ADDED"
                       : type == WatchEventType::kModified ? "MODIFIED"
                                                           : "DELETED";
    seen_.push_back(std::string(kind) + " " + name);
    texts_.push_back(std::string(object));
  }
  void OnProblem(ListWatchProblem problem, std::string_view reason, bool first) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first) problems_.push_back(std::string(ProblemName(problem)) + ": " + std::string(reason));
  }

  std::vector<std::string> seen() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }
  std::vector<std::string> texts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return texts_;
  }
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [name, text] : objects_) names.push_back(name);
    return names;
  }
  std::vector<std::string> problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> listing_, objects_;
  std::vector<std::string> seen_, texts_, problems_;
};

class ListWatchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    dir_ = testing_support::MockKubeApiDir::Create("list-watch-test", kToken, &error);
    ASSERT_TRUE(dir_) << error;
  }
  static void TearDownTestSuite() { dir_.reset(); }

  void TearDown() override { StopWatch(); }

  // Starts a mock of this test's own with these objects and watches. (Vectors, not Json: a
  // braced list of one Json is that Json itself, not an array of it.)
  void StartMock(const std::vector<Json>& objects, const std::vector<std::vector<Json>>& watches) {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string error;
    mock_ = testing_support::StartScriptedMock(*dir_, name, Json{{"items", objects}}, Json{{"watches", watches}}, &log_,
                                               &error);
    ASSERT_TRUE(mock_) << error;
    client_ = std::make_unique<KubeApiClient>(dir_->Config(mock_->port()));
  }

  static ListWatchOptions Options() {
    ListWatchOptions o;
    o.collection_path = "/api/v1/pods";
    o.page_size = 1;  // every object its own page: the pages are followed
    o.initial_backoff = 100ms;
    o.max_backoff = 400ms;
    o.stop_check = 50ms;
    return o;
  }

  void RunWatch(ListWatchOptions options) {
    watch_ = std::make_unique<ListWatch>(*client_, std::move(options), sink_);
    thread_ = std::thread([this] {
      watch_->Run([this] { return stop_.load(); });
      returned_ = Clock::now();
    });
  }

  void StopWatch() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // The resourceVersion of each watch request, in order, from the mock's log.
  std::vector<std::string> WatchVersions() const {
    std::ifstream in(log_);
    std::vector<std::string> versions;
    static const std::regex watch(R"( watch=1 resourceVersion=(\S*)$)");
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
      if (std::regex_search(line, m, watch)) versions.push_back(m[1]);
    }
    return versions;
  }

  static inline std::unique_ptr<testing_support::MockKubeApiDir> dir_;
  fs::path log_;
  std::unique_ptr<testing_support::MockKubeApiProcess> mock_;
  std::unique_ptr<KubeApiClient> client_;
  RecordingSink sink_;
  std::unique_ptr<ListWatch> watch_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  Clock::time_point returned_;
};

TEST_F(ListWatchTest, ListsThenHandsOnEachWatchEventInOrderWithItsText) {
  const Json added = Pod("c", "20");
  StartMock({Pod("a", "10"), Pod("b", "11")}, {{WatchEvent("ADDED", added), WatchEvent("MODIFIED", Pod("a", "21")),
                                                WatchEvent("DELETED", Pod("b", "22")), HangStep()}});
  RunWatch(Options());
  ASSERT_TRUE(Eventually([&] { return watch_->stats().deleted == 1; })) << ::testing::PrintToString(sink_.seen());
  EXPECT_EQ(sink_.seen(), (std::vector<std::string>{"begin", "listed a", "listed b", "end 12345", "ADDED c",
                                                    "MODIFIED a", "DELETED b"}));
  ASSERT_FALSE(sink_.texts().empty());
  EXPECT_EQ(sink_.texts().front(), added.dump());  // the object's own text, as the server sent it
  EXPECT_EQ(sink_.names(), (std::vector<std::string>{"a", "c"}));
  const ListWatchStats stats = watch_->stats();
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_EQ(stats.relists, 0u);
  EXPECT_EQ(stats.added + stats.modified + stats.deleted, 3u);
  EXPECT_EQ(stats.resource_version, "22");
  EXPECT_EQ(WatchVersions(), (std::vector<std::string>{"12345"}));
}

TEST_F(ListWatchTest, ABookmarkMovesTheVersionAndAnEndedWatchStartsAgainFromIt) {
  StartMock({Pod("a", "10")}, {{WatchEvent("ADDED", Pod("x", "30")), Bookmark("40")}, {HangStep()}});
  RunWatch(Options());
  ASSERT_TRUE(Eventually([&] { return WatchVersions().size() >= 2; }));
  EXPECT_EQ(WatchVersions(), (std::vector<std::string>{"12345", "40"}));
  const ListWatchStats stats = watch_->stats();
  EXPECT_EQ(stats.bookmarks, 1u);
  EXPECT_EQ(stats.added, 1u);  // the bookmark is no event
  EXPECT_EQ(stats.watch_restarts, 1u);
  EXPECT_EQ(stats.lists, 1u);
  EXPECT_EQ(sink_.seen().back(), "ADDED x");
}

TEST_F(ListWatchTest, AnExpiredErrorEventListsAgainAndTheListDropsWhatWasDeletedUnseen) {
  StartMock({Pod("a", "10"), Pod("b", "11")},
            {{WatchEvent("ADDED", Pod("c", "20")), {{"apply", WatchEvent("DELETED", Pod("b", "50"))}}, ExpiredEvent()},
             {HangStep()}});
  RunWatch(Options());
  ASSERT_TRUE(Eventually([&] { return watch_->stats().lists == 2 && WatchVersions().size() == 2; }));
  EXPECT_EQ(sink_.names(), (std::vector<std::string>{"a", "c"}));
  const ListWatchStats stats = watch_->stats();
  EXPECT_EQ(stats.relists, 1u);
  EXPECT_EQ(stats.count(ListWatchProblem::kExpired), 1u);
  EXPECT_EQ(WatchVersions(), (std::vector<std::string>{"12345", "50"}));
}

TEST_F(ListWatchTest, AVersionGoneRightAfterItsListIsListedAgainOnlyAfterAWait) {
  StartMock({Pod("a", "10")}, {{ExpiredEvent()}, {ExpiredEvent()}, {HangStep()}});
  ListWatchOptions options = Options();
  options.initial_backoff = 300ms;
  options.max_backoff = 1s;
  const Clock::time_point started = Clock::now();
  RunWatch(options);
  ASSERT_TRUE(Eventually([&] { return watch_->stats().lists == 3; }));
  EXPECT_GE(Clock::now() - started, 300ms + 600ms - 20ms);  // jitter only adds
  EXPECT_EQ(watch_->stats().count(ListWatchProblem::kExpired), 2u);
}

TEST_F(ListWatchTest, AnHttp410ListsAgain) {
  StartMock({Pod("a", "10"), Pod("b", "11")},
            {{WatchEvent("ADDED", Pod("c", "20")), {{"apply", WatchEvent("DELETED", Pod("b", "60"))}}},
             {{{"status", 410}}},
             {HangStep()}});
  RunWatch(Options());
  ASSERT_TRUE(Eventually([&] { return watch_->stats().lists == 2 && WatchVersions().size() == 3; }));
  EXPECT_EQ(sink_.names(), (std::vector<std::string>{"a", "c"}));
  const ListWatchStats stats = watch_->stats();
  EXPECT_EQ(stats.relists, 1u);
  EXPECT_EQ(stats.count(ListWatchProblem::kExpired), 1u);
  EXPECT_EQ(WatchVersions(), (std::vector<std::string>{"12345", "20", "60"}));
}

TEST_F(ListWatchTest, AFailingServerIsAskedAgainAfterLongerAndLongerWaits) {
  const std::vector<Json> failing = {{{"status", 500}}};
  StartMock({Pod("a", "10")}, {failing, failing, failing, failing, {HangStep()}});
  ListWatchOptions options = Options();
  options.initial_backoff = 200ms;
  options.max_backoff = 800ms;
  RunWatch(options);
  std::vector<Clock::time_point> asked;
  ASSERT_TRUE(Eventually([&] {
    while (asked.size() < watch_->stats().watches) asked.push_back(Clock::now());
    return asked.size() >= 5;
  }));
  // Each wait is at least the backoff it was due (jitter only adds): 200, 400, 800, 800 ms.
  const std::vector<std::chrono::milliseconds> least = {200ms, 400ms, 800ms, 800ms};
  for (std::size_t i = 0; i < least.size(); ++i) {
    EXPECT_GE(asked[i + 1] - asked[i], least[i] - 20ms) << "between watch " << i + 1 << " and " << i + 2;
  }
  EXPECT_EQ(watch_->stats().count(ListWatchProblem::kWatchAnswered), 4u);
  EXPECT_EQ(watch_->stats().lists, 1u);  // a failure other than 410 watches again, it does not list
}

TEST_F(ListWatchTest, GarbageAndOverlongLinesAreCountedAndTheWatchStartsAgain) {
  auto raw = [](const std::string& line) { return std::vector<Json>{Json{{"raw", line}}}; };
  StartMock({Pod("a", "10")}, {raw("not json at all"),
                               raw(R"({"type":"ADDED"})"),
                               raw(R"({"type":"SURPRISE","object":{}})"),
                               raw(R"({"type":"ADDED","object":{"metadata":{)"),
                               std::vector<Json>{{{"long_line", 5000}}},
                               {WatchEvent("ADDED", Pod("ok", "70")), HangStep()}});
  ListWatchOptions options = Options();
  options.initial_backoff = 20ms;
  options.max_event_bytes = 1024;
  RunWatch(options);
  ASSERT_TRUE(Eventually([&] { return watch_->stats().added == 1; })) << ::testing::PrintToString(sink_.problems());
  const ListWatchStats stats = watch_->stats();
  EXPECT_EQ(stats.count(ListWatchProblem::kBadEvent), 4u);
  EXPECT_EQ(stats.count(ListWatchProblem::kEventTooLong), 1u);
  EXPECT_EQ(sink_.problems().size(), 2u) << "each kind is told as new once";
  EXPECT_EQ(sink_.seen().back(), "ADDED ok");
  EXPECT_EQ(WatchVersions().back(), "12345");  // no bad line moved the version
}

TEST_F(ListWatchTest, AWatchThatFallsSilentIsGivenUpAndStartedAgain) {
  StartMock({Pod("a", "10")}, {{WatchEvent("ADDED", Pod("b", "80")), {{"sleep_ms", 100}}, HangStep()}});
  ListWatchOptions options = Options();
  options.idle_timeout = 400ms;
  RunWatch(options);
  ASSERT_TRUE(Eventually([&] { return WatchVersions().size() >= 2; }));  // the mock's log: the request came
  EXPECT_GE(watch_->stats().count(ListWatchProblem::kWatchIdle), 1u);
  EXPECT_EQ(WatchVersions().at(1), "80");
  EXPECT_EQ(watch_->stats().lists, 1u);
}

TEST_F(ListWatchTest, StopEndsAHangingWatchAndABackoffPromptly) {
  StartMock({Pod("a", "10")}, {{HangStep()}});
  ListWatchOptions options = Options();
  options.stop_check = 200ms;
  RunWatch(options);
  ASSERT_TRUE(Eventually([&] { return watch_->stats().watches == 1; }));
  std::this_thread::sleep_for(300ms);
  const Clock::time_point asked = Clock::now();
  StopWatch();
  EXPECT_LT(returned_ - asked, 2s);

  // And in the middle of a long wait after a failure.
  StartMock({Pod("a", "10")}, {{{{"status", 500}}}});
  options.initial_backoff = 30s;
  options.max_backoff = 30s;
  stop_ = false;
  RunWatch(options);
  ASSERT_TRUE(Eventually([&] { return watch_->stats().count(ListWatchProblem::kWatchAnswered) == 1; }));
  const Clock::time_point asked_again = Clock::now();
  StopWatch();
  EXPECT_LT(returned_ - asked_again, 2s);
}

}  // namespace
}  // namespace ray_webhook
