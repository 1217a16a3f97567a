// KubeApiClient against mock-kube-api (tests/tools/mock_kube_api.cpp) over real
// HTTPS: what it sends, how it reads PodLists, and how every failure comes
// back as ok == false within the deadline.
//
// The suite makes a throw-away CA with certs/generate.sh, starts the mock on a
// random free port with tests/fixtures/kube-api/pods.json, and stops it at the
// end. Each test that changes a token uses its own token file.
#include "ray_webhook/kube/kube_api_client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ray_webhook/kube/paged_list.h"
#include "ray_webhook/live_audit/cluster_audit.h"

namespace ray_webhook {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "mock-token-0123456789abcdef";
constexpr char kWrongToken[] = "mock-token-fedcba9876543210";  // same length as kToken

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Writes a token file and moves its mtime strictly forward of every earlier
// write, so a client that watches mtime sees each change even when two writes
// land in the same filesystem timestamp tick.
void WriteToken(const fs::path& path, const std::string& token) {
  static fs::file_time_type last{};
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << token;
  }
  const fs::file_time_type next = std::max(fs::last_write_time(path), last) + 2s;
  fs::last_write_time(path, next);
  last = next;
}

long long MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Every failure: an error with a one-line reason that names the HTTP status
// the API answered, or (http_status 0) says no answer came.
void ExpectFailure(const HeadPodList& r, int http_status) {
  EXPECT_FALSE(r.ok());
  constexpr std::string_view kAnswered = "the Kubernetes API answered ";
  if (http_status == 0) {
    EXPECT_EQ(r.error().find(kAnswered), std::string::npos) << r.error();
  } else {
    EXPECT_NE(r.error().find(std::string(kAnswered) + std::to_string(http_status) + ":"), std::string::npos)
        << r.error();
  }
  EXPECT_FALSE(r.error().empty());
  EXPECT_EQ(r.error().find('\n'), std::string::npos) << "error is not one line: " << r.error();
}

class KubeApiClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_error_.clear();
    std::string tmpl = (fs::temp_directory_path() / "kube-api-client-test.XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      setup_error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    if (!RunCerts(dir_ / "certs") || !RunCerts(dir_ / "other-ca")) return;
    token_file_ = dir_ / "token";
    WriteToken(token_file_, kToken);
    StartMock();
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      pid_t done = 0;
      const auto deadline = Clock::now() + 5s;
      while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
      }
      if (done == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        ADD_FAILURE() << "mock-kube-api did not stop within 5 s of SIGTERM";
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ADD_FAILURE() << "mock-kube-api did not exit cleanly; stderr: " << ReadFile(dir_ / "mock.stderr");
      }
      pid_ = -1;
    }
    if (!dir_.empty() && !std::getenv("RAY_WEBHOOK_KEEP_TEST_DIR")) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
    dir_.clear();
  }

  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }

  static bool RunCerts(const fs::path& out) {
    const std::string cmd = "bash " + ShellQuote(CERTS_SCRIPT) + " --out " + ShellQuote(out.string()) + " 2>>" +
                            ShellQuote((dir_ / "certs.log").string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(out / "ca.crt")) {
      setup_error_ = "certs script failed: " + cmd + "\n" + ReadFile(dir_ / "certs.log");
      return false;
    }
    return true;
  }

  // Starts the mock on random ports until one binds and it says "listening".
  static void StartMock() {
    std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
    std::uniform_int_distribution<int> ports(20000, 60000);
    for (int attempt = 0; attempt < 30; ++attempt) {
      const int port = ports(rng);
      bool port_busy = false;
      if (StartMockOn(port, &port_busy)) {
        port_ = port;
        return;
      }
      if (!port_busy) return;  // setup_error_ says why
    }
    setup_error_ = "mock-kube-api found no free port in 30 tries";
  }

  static bool StartMockOn(int port, bool* port_busy) {
    const std::string port_s = std::to_string(port);
    const std::string cert = (dir_ / "certs" / "tls.crt").string();
    const std::string key = (dir_ / "certs" / "tls.key").string();
    const std::string pods = (fs::path(RAY_WEBHOOK_FIXTURES) / "kube-api" / "pods.json").string();
    const std::string objects = (fs::path(RAY_WEBHOOK_FIXTURES) / "kube-api" / "objects.json").string();
    const std::string log = (dir_ / "mock.log").string();
    const std::string err = (dir_ / "mock.stderr").string();
    std::vector<const char*> argv = {
        MOCK_KUBE_API_BIN, "--port",  port_s.c_str(), "--tls-cert", cert.c_str(), "--tls-key",
        key.c_str(),       "--token", kToken,         "--pods",     pods.c_str(), "--objects",
        objects.c_str(),   "--log",   log.c_str(),    nullptr};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      setup_error_ = "pipe2 failed";
      return false;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      setup_error_ = "fork failed";
      close(fds[0]);
      close(fds[1]);
      return false;
    }
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      dup2(fds[1], STDOUT_FILENO);
      const int errfd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (errfd >= 0) dup2(errfd, STDERR_FILENO);
      execv(argv[0], const_cast<char* const*>(argv.data()));
      _exit(127);
    }
    close(fds[1]);

    std::string out;
    bool listening = false;
    const auto deadline = Clock::now() + 10s;
    while (!listening) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[256];
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;  // EOF: the mock exited
      out.append(buf, static_cast<std::size_t>(n));
      listening = Contains(out, "listening\n");
    }
    close(fds[0]);
    if (listening) {
      pid_ = pid;
      return true;
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string stderr_text = ReadFile(err);
    *port_busy = Contains(stderr_text, "cannot listen");
    setup_error_ = "mock-kube-api did not start on port " + port_s + ": " + stderr_text;
    return false;
  }

  static KubeApiConfig Config(std::chrono::milliseconds timeout = 2000ms) {
    KubeApiConfig c;
    c.server = "https://127.0.0.1:" + std::to_string(port_);
    c.token_file = token_file_.string();
    c.ca_file = (dir_ / "certs" / "ca.crt").string();
    c.timeout = timeout;
    return c;
  }

  // A token file of the test's own, so tests that change it stay independent.
  static fs::path OwnTokenFile(const std::string& content) {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path path = dir_ / (std::string("token-") + info->name());
    WriteToken(path, content);
    return path;
  }

  static std::string MockLog() { return ReadFile(dir_ / "mock.log"); }

  static std::string LogLine(const std::string& cluster, const std::string& auth) {
    return "GET /api/v1/namespaces/default/pods selector=ray.io/cluster=" + cluster +
           ",ray.io/node-type=head auth=" + auth + "\n";
  }

  static std::size_t CountLines(const std::string& log, const std::string& line) {
    std::size_t n = 0;
    for (std::size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + line.size())) {
      if (at == 0 || log[at - 1] == '\n') ++n;
    }
    return n;
  }

  static inline fs::path dir_;
  static inline fs::path token_file_;
  static inline int port_ = 0;
  static inline pid_t pid_ = -1;
  static inline std::string setup_error_;
};

TEST_F(KubeApiClientTest, NoHeadPodIsOkAndEmptyFromOneGetWithSelectorAndToken) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "no-head");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
  // The mock decodes the query: the client sent exactly this selector, once.
  const std::string log = MockLog();
  EXPECT_EQ(CountLines(log, LogLine("no-head", "ok")), 1u) << log;
}

TEST_F(KubeApiClientTest, ClusterWithoutAFixtureEntryIsOkAndEmpty) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "never-created");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
}

TEST_F(KubeApiClientTest, LiveHeadIsOneRunningPod) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "live-head-head-x7k2p");
  EXPECT_EQ((*r)[0].phase, "Running");
  EXPECT_FALSE((*r)[0].terminating);
}

TEST_F(KubeApiClientTest, PendingHeadKeepsItsPhase) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "pending-head");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "pending-head-head-p3nd1");
  EXPECT_EQ((*r)[0].phase, "Pending");
  EXPECT_FALSE((*r)[0].terminating);
}

TEST_F(KubeApiClientTest, HeadWithDeletionTimestampIsTerminating) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "terminating-head");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].name, "terminating-head-head-abcde");
  EXPECT_EQ((*r)[0].phase, "Running");
  EXPECT_TRUE((*r)[0].terminating);
}

TEST_F(KubeApiClientTest, FailedAndSucceededHeadsKeepTheirPhase) {
  KubeApiClient client(Config());
  HeadPodList failed = client.ListHeadPods("default", "failed-head");
  ASSERT_TRUE(failed.ok()) << failed.error();
  ASSERT_EQ(failed->size(), 1u);
  EXPECT_EQ((*failed)[0].name, "failed-head-head-qwert");
  EXPECT_EQ((*failed)[0].phase, "Failed");
  EXPECT_FALSE((*failed)[0].terminating);

  HeadPodList succeeded = client.ListHeadPods("default", "succeeded-head");
  ASSERT_TRUE(succeeded.ok()) << succeeded.error();
  ASSERT_EQ(succeeded->size(), 1u);
  EXPECT_EQ((*succeeded)[0].phase, "Succeeded");
}

TEST_F(KubeApiClientTest, MixedHeadsComeBackInListOrder) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "mixed");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].name, "mixed-head-failed1");
  EXPECT_EQ((*r)[0].phase, "Failed");
  EXPECT_FALSE((*r)[0].terminating);
  EXPECT_EQ((*r)[1].name, "mixed-head-old1");
  EXPECT_EQ((*r)[1].phase, "Running");
  EXPECT_TRUE((*r)[1].terminating);
  EXPECT_EQ((*r)[2].name, "mixed-head-live1");
  EXPECT_EQ((*r)[2].phase, "Running");
  EXPECT_FALSE((*r)[2].terminating);
}

TEST_F(KubeApiClientTest, OneClientServesRepeatedCalls) {
  KubeApiClient client(Config());
  for (int i = 0; i < 5; ++i) {
    HeadPodList r = client.ListHeadPods("default", "live-head");
    ASSERT_TRUE(r.ok()) << "call " << i << ": " << r.error();
    ASSERT_EQ(r->size(), 1u);
  }
}

TEST_F(KubeApiClientTest, KeepsItsConfig) {
  const KubeApiConfig c = Config(1234ms);
  KubeApiClient client(c);
  EXPECT_EQ(client.config().server, c.server);
  EXPECT_EQ(client.config().token_file, c.token_file);
  EXPECT_EQ(client.config().ca_file, c.ca_file);
  EXPECT_EQ(client.config().timeout, 1234ms);
}

TEST_F(KubeApiClientTest, WrongTokenIs401) {
  KubeApiConfig c = Config();
  c.token_file = OwnTokenFile(kWrongToken).string();
  KubeApiClient client(c);
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ExpectFailure(r, 401);
  EXPECT_TRUE(Contains(r.error(), "401")) << r.error();
}

TEST_F(KubeApiClientTest, EmptyTokenFileSettingSendsNoAuthorization) {
  KubeApiConfig c = Config();
  c.token_file.clear();
  KubeApiClient client(c);
  HeadPodList r = client.ListHeadPods("default", "no-token-configured");
  ExpectFailure(r, 401);
  EXPECT_EQ(CountLines(MockLog(), LogLine("no-token-configured", "bad")), 1u) << MockLog();
}

TEST_F(KubeApiClientTest, MissingTokenFileFails) {
  KubeApiConfig c = Config();
  c.token_file = (dir_ / "no-such-token").string();
  KubeApiClient client(c);
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ExpectFailure(r, 0);
  EXPECT_NE(r.error().find("cannot read the token file"), std::string::npos) << r.error();
}

TEST_F(KubeApiClientTest, RotatedTokenIsUsedOnTheNextCall) {
  KubeApiConfig c = Config();
  const fs::path token = OwnTokenFile(kWrongToken);
  c.token_file = token.string();
  KubeApiClient client(c);
  ExpectFailure(client.ListHeadPods("default", "live-head"), 401);

  WriteToken(token, kToken);
  HeadPodList good = client.ListHeadPods("default", "live-head");
  ASSERT_TRUE(good.ok()) << good.error();
  ASSERT_EQ(good->size(), 1u);

  // And back: a revoked token is noticed too, not cached.
  WriteToken(token, kWrongToken);
  ExpectFailure(client.ListHeadPods("default", "live-head"), 401);
}

// kubelet rotates projected tokens by swapping in a new file, not by
// rewriting the old one in place.
TEST_F(KubeApiClientTest, TokenReplacedByRenameIsUsedOnTheNextCall) {
  KubeApiConfig c = Config();
  const fs::path token = OwnTokenFile(kWrongToken);
  c.token_file = token.string();
  KubeApiClient client(c);
  ExpectFailure(client.ListHeadPods("default", "live-head"), 401);

  const fs::path fresh = token.string() + ".new";
  WriteToken(fresh, kToken);
  fs::rename(fresh, token);
  HeadPodList good = client.ListHeadPods("default", "live-head");
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_EQ(good->size(), 1u);
}

TEST_F(KubeApiClientTest, ForbiddenIs403WithTheStatusMessage) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "forbidden");
  ExpectFailure(r, 403);
  EXPECT_TRUE(Contains(r.error(), "403")) << r.error();
  EXPECT_TRUE(Contains(Lower(r.error()), "forbidden")) << "want the Status reason or message: " << r.error();
}

TEST_F(KubeApiClientTest, ServerErrorIs500) {
  KubeApiClient client(Config());
  HeadPodList r = client.ListHeadPods("default", "broken");
  ExpectFailure(r, 500);
  EXPECT_TRUE(Contains(r.error(), "500")) << r.error();
}

TEST_F(KubeApiClientTest, SlowServerTimesOutWithinTheDeadline) {
  KubeApiClient client(Config(300ms));
  const auto start = Clock::now();
  HeadPodList r = client.ListHeadPods("default", "slow");
  const long long ms = MillisSince(start);
  ExpectFailure(r, 0);
  const std::string e = Lower(r.error());
  EXPECT_TRUE(Contains(e, "timeout") || Contains(e, "timed out") || Contains(e, "deadline")) << r.error();
  EXPECT_LT(ms, 3000) << "the mock hangs 5 s; the 300 ms deadline should end the call long before";
}

TEST_F(KubeApiClientTest, UnknownCaFailsTlsVerification) {
  KubeApiConfig c = Config();
  c.ca_file = (dir_ / "other-ca" / "ca.crt").string();
  KubeApiClient client(c);
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ExpectFailure(r, 0);
}

TEST_F(KubeApiClientTest, MissingCaFileFails) {
  KubeApiConfig c = Config();
  c.ca_file = (dir_ / "no-such-ca.crt").string();
  KubeApiClient client(c);
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ExpectFailure(r, 0);
}

TEST_F(KubeApiClientTest, NothingListeningFailsFast) {
  // A bound socket that never listens: connecting to it is refused at once,
  // and no other process can take the port while the test runs.
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len), 0);

  KubeApiConfig c = Config(5000ms);
  c.server = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  KubeApiClient client(c);
  const auto start = Clock::now();
  HeadPodList r = client.ListHeadPods("default", "live-head");
  const long long ms = MillisSince(start);
  close(sock);
  ExpectFailure(r, 0);
  EXPECT_LT(ms, 2000) << "a refused connection should not wait for the 5 s deadline";
}

TEST_F(KubeApiClientTest, UnconfiguredClientFailsWithoutThrowing) {
  KubeApiClient client(KubeApiConfig{});
  EXPECT_FALSE(client.config().configured());
  HeadPodList r = client.ListHeadPods("default", "live-head");
  ExpectFailure(r, 0);
}

TEST_F(KubeApiClientTest, ConcurrentCallsOnOneClientAllSucceed) {
  KubeApiClient client(Config(1000ms));
  constexpr int kThreads = 8;
  constexpr int kCalls = 5;
  std::atomic<int> ok{0};
  std::atomic<int> timed_out{0};
  std::vector<std::string> errors(kThreads);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  // One caller is stuck on the slow cluster while the others keep listing.
  threads.emplace_back([&] {
    if (!client.ListHeadPods("default", "slow").ok()) ++timed_out;
  });
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        HeadPodList r = client.ListHeadPods("default", t % 2 ? "live-head" : "mixed");
        if (r.ok() && r->size() == (t % 2 ? 1u : 3u)) {
          ++ok;
        } else {
          errors[t] = r.error();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads * kCalls);
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
  EXPECT_EQ(timed_out.load(), 1);
  EXPECT_LT(MillisSince(start), 4000);
}

// The pure helpers need no server.

TEST(KubeApiUrlEncodeTest, EncodesTheHeadSelector) {
  EXPECT_EQ(UrlEncode("ray.io/cluster=a,ray.io/node-type=head"), "ray.io%2Fcluster%3Da%2Cray.io%2Fnode-type%3Dhead");
}

TEST(KubeApiUrlEncodeTest, UnreservedPassAndTheRestIsUppercaseHex) {
  EXPECT_EQ(UrlEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(UrlEncode(""), "");
  EXPECT_EQ(UrlEncode("a b+c&d?e#f%"), "a%20b%2Bc%26d%3Fe%23f%25");
  EXPECT_EQ(UrlEncode("\xC3\xA9"), "%C3%A9");
}

TEST(KubeApiParsePodListTest, ReadsNamesPhasesAndDeletion) {
  const std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"default"},"status":{"phase":"Running"}},
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","deletionTimestamp":"2026-11-30T10:00:00Z"},
     "status":{"phase":"Running"}},
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"c"}}]})";
  auto pods = ParsePodList(body);
  ASSERT_TRUE(pods.ok()) << pods.error();
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0].name, "a");
  EXPECT_EQ((*pods)[0].phase, "Running");
  EXPECT_FALSE((*pods)[0].terminating);
  EXPECT_EQ((*pods)[1].name, "b");
  EXPECT_TRUE((*pods)[1].terminating);
  EXPECT_EQ((*pods)[2].name, "c");
  EXPECT_EQ((*pods)[2].phase, "") << "status.phase may be absent";
  EXPECT_FALSE((*pods)[2].terminating);
}

TEST(KubeApiParsePodListTest, EmptyPodListIsNoPods) {
  auto pods = ParsePodList(R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]})");
  ASSERT_TRUE(pods.ok()) << pods.error();
  EXPECT_TRUE(pods->empty());
}

TEST(KubeApiParsePodListTest, NonPodListBodiesAreRejectedWithAReason) {
  const std::vector<std::string> bodies = {
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})",
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}})",
      "[]",
      "not json",
      "",
      R"({"kind":"PodList","apiVersion":"v1","items":[)",
  };
  for (const std::string& body : bodies) {
    auto pods = ParsePodList(body);
    EXPECT_FALSE(pods.ok()) << body;
    EXPECT_FALSE(pods.error().empty()) << body;
  }
}

// "Never throws": a PodList whose fields have the wrong JSON types is a bad
// body, not an exception.
TEST(KubeApiParsePodListTest, WrongFieldTypesDoNotThrow) {
  const std::vector<std::string> bodies = {
      R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":5},"status":{"phase":"Running"}}]})",
      R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"},"status":{"phase":7}}]})",
      R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":[],"status":"Running"}]})",
      R"({"kind":"PodList","apiVersion":"v1","items":[5,"x",null]})",
      R"({"kind":"PodList","apiVersion":"v1","items":{}})",
  };
  for (const std::string& body : bodies) {
    EXPECT_NO_THROW(static_cast<void>(ParsePodList(body))) << body;
  }
}

}  // namespace
}  // namespace ray_webhook

namespace ray_webhook {
namespace {

// The audit's lists: ListPages against the mock's chunked lists (--objects, tests/fixtures/kube-api/objects.json).
TEST_F(KubeApiClientTest, ListPagesFollowsContinueUntilTheLastPage) {
  KubeApiClient client(Config());
  ListRequest request{"/api/v1/pods", std::string(kRayPodSelector), 2};
  std::vector<std::string> names;
  std::size_t pages = 0;
  Result<bool> listed = ListPages(client, request, [&](std::string_view text, std::size_t number) {
    const nlohmann::json page = nlohmann::json::parse(text);
    EXPECT_EQ(number, ++pages);
    EXPECT_EQ(page["kind"], "PodList");
    EXPECT_LE(page["items"].size(), 2u);
    for (const auto& item : page["items"]) names.push_back(item["metadata"]["name"]);
    return Status::Ok();
  });
  ASSERT_TRUE(listed.ok()) << listed.error();
  EXPECT_TRUE(*listed);
  EXPECT_EQ(names.size(), 9u);  // six Pods of ns1, three workers of default
  EXPECT_EQ(pages, 5u);
  EXPECT_NE(MockLog().find("GET /api/v1/pods selector=ray.io/node-type in (head,worker),ray.io/cluster auth=ok"),
            std::string::npos)
      << MockLog();
}

TEST_F(KubeApiClientTest, ListPagesOfOneNamespace) {
  KubeApiClient client(Config());
  std::size_t items = 0;
  Result<bool> listed = ListPages(client, {"/api/v1/namespaces/default/pods", std::string(kRayPodSelector), 500},
                                  [&](std::string_view page, std::size_t) {
                                    items += nlohmann::json::parse(page)["items"].size();
                                    return Status::Ok();
                                  });
  ASSERT_TRUE(listed.ok()) << listed.error();
  EXPECT_EQ(items, 3u);
}

TEST_F(KubeApiClientTest, ListPagesOfAResourceNotServedIsFalse) {
  KubeApiClient client(Config());
  Result<bool> listed = ListPages(client, {"/apis/ray.io/v1/rayservices", "", 500},
                                  [](std::string_view, std::size_t) { return Status::Ok(); });
  ASSERT_TRUE(listed.ok()) << listed.error();
  EXPECT_FALSE(*listed);
}

TEST_F(KubeApiClientTest, ListPagesStopsOnAnErrorStatusOrTheSinksError) {
  KubeApiConfig wrong = Config();
  wrong.token_file = OwnTokenFile(kWrongToken).string();
  KubeApiClient unauthorized(wrong);
  Result<bool> denied = ListPages(unauthorized, {"/apis/ray.io/v1/rayclusters", "", 500},
                                  [](std::string_view, std::size_t) { return Status::Ok(); });
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error(), "listing /apis/ray.io/v1/rayclusters: the Kubernetes API answered 401: Unauthorized");
  KubeApiClient client(Config());
  Result<bool> stopped =
      ListPages(client, {"/api/v1/pods", "", 1}, [](std::string_view, std::size_t) { return Status::Error("enough"); });
  EXPECT_EQ(stopped.error(), "enough");
  Result<KubeApiClient::Answer> expired = client.Get("/api/v1/pods?limit=1&continue=bogus", 2000ms, 1 << 20);
  ASSERT_TRUE(expired.ok()) << expired.error();
  EXPECT_EQ(expired->status, 410);
}

TEST_F(KubeApiClientTest, AuditClusterReadsEveryNamespaceOrOne) {
  KubeApiClient client(Config());
  ClusterAuditScope scope;
  scope.page_size = 2;
  Result<AuditReport> all = AuditCluster(client, scope, PolicyConfig{});
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_EQ(all->pods, 9u);
  EXPECT_EQ(all->ray_clusters, 1u);
  EXPECT_EQ(all->ray_jobs, 1u);
  EXPECT_EQ(all->clusters_with_extra_heads, 1u);
  EXPECT_EQ(all->findings_by_rule.at("extra-head"), 1u);
  EXPECT_EQ(all->findings_by_rule.at("worker-drift"), 2u);
  ASSERT_EQ(all->notes.size(), 2u);
  EXPECT_EQ(all->notes[0].rfind("rayservices: not served", 0), 0u) << all->notes[0];
  EXPECT_EQ(all->notes[1].rfind("raycronjobs: not served", 0), 0u) << all->notes[1];
  scope.namespace_name = "default";
  Result<AuditReport> one = AuditCluster(client, scope, PolicyConfig{});
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(one->pods, 3u);
  EXPECT_EQ(one->clusters_with_extra_heads, 0u);
  EXPECT_EQ(one->ray_jobs, 0u);
}

}  // namespace
}  // namespace ray_webhook
