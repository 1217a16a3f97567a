#include "ray_webhook/logging/batched_log_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ray_webhook {
namespace {

// A pipe whose read end never blocks, so a test sees exactly what was written so far.
class Pipe {
 public:
  Pipe() {
    EXPECT_EQ(::pipe(fds_), 0);
    ::fcntl(fds_[0], F_SETFL, O_NONBLOCK);
  }
  ~Pipe() {
    ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
  }
  int write_end() const { return fds_[1]; }
  std::string Drain() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds_[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
};

std::shared_ptr<spdlog::logger> LoggerOn(std::shared_ptr<BatchedLogSink> sink) {
  auto logger = std::make_shared<spdlog::logger>("test", std::move(sink));
  logger->set_pattern("%l %v");
  logger->set_level(spdlog::level::trace);
  return logger;
}

// Options whose timer never fires during a test, so only size, level and flush write.
BatchedLogSink::Options NoTimer(std::size_t batch_bytes = 64 * 1024, std::size_t max_pending = 1 << 20) {
  BatchedLogSink::Options o;
  o.interval = std::chrono::hours(1);
  o.batch_bytes = batch_bytes;
  o.max_pending_bytes = max_pending;
  return o;
}

// What the writer thread has written once `want` bytes arrived, or after 5 s.
std::string AwaitBytes(Pipe& pipe, std::size_t want) {
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (seen.size() < want && std::chrono::steady_clock::now() < deadline) {
    seen += pipe.Drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return seen;
}

// Runs `threads` threads that each call log_lines(thread index) while another
// thread reads the pipe (it holds 64 KiB, less than what the tests log), then
// flushes and returns everything that was written.
template <typename LogLines>
std::string LogFromThreads(Pipe& pipe, spdlog::logger& logger, int threads, LogLines log_lines) {
  std::string seen;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) {
      seen += pipe.Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::thread> loggers;
  for (int t = 0; t < threads; ++t) loggers.emplace_back([&, t] { log_lines(t); });
  for (std::thread& th : loggers) th.join();
  logger.flush();
  done = true;
  reader.join();
  return seen + pipe.Drain();
}

TEST(BatchedLogSink, InfoLinesWaitForTheTimerOrFlush) {
  Pipe pipe;
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer()));
  logger->info("review one");
  logger->info("review two");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pipe.Drain(), "");
  logger->flush();  // synchronous: written when it returns
  EXPECT_EQ(pipe.Drain(), "info review one\ninfo review two\n");
  logger->flush();  // nothing twice
  EXPECT_EQ(pipe.Drain(), "");
}

TEST(BatchedLogSink, TheTimerWritesInfoLines) {
  Pipe pipe;
  BatchedLogSink::Options o;
  o.interval = std::chrono::milliseconds(20);
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), o));
  logger->info("review");
  EXPECT_EQ(AwaitBytes(pipe, 12), "info review\n");
}

TEST(BatchedLogSink, AWarningWakesTheWriterForItselfAndEverythingBeforeIt) {
  Pipe pipe;
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer()));
  logger->info("review");
  logger->warn("head lookup failed");
  const std::string want = "info review\nwarning head lookup failed\n";
  EXPECT_EQ(AwaitBytes(pipe, want.size()), want);
}

TEST(BatchedLogSink, AFullBatchWakesTheWriter) {
  Pipe pipe;
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer(100)));
  const std::string field(30, 'x');
  for (int i = 0; i < 3; ++i) logger->info(field);  // 3 x 36 bytes passes 100
  EXPECT_EQ(AwaitBytes(pipe, 3 * 36).size(), 3u * 36);
}

TEST(BatchedLogSink, DestructionWritesWhatIsLeft) {
  Pipe pipe;
  {
    auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer()));
    logger->info("stopped");
  }
  EXPECT_EQ(pipe.Drain(), "info stopped\n");
}

TEST(BatchedLogSink, LinesBeyondThePendingLimitAreDroppedAndCounted) {
  Pipe pipe;
  auto sink = std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer(1 << 20, 100));
  auto logger = LoggerOn(sink);
  const std::string field(30, 'x');
  for (int i = 0; i < 5; ++i) logger->info(field);  // room for two 36-byte lines
  EXPECT_EQ(sink->dropped(), 3u);
  logger->flush();
  const std::string line = "info " + field + "\n";
  EXPECT_EQ(pipe.Drain(),
            line + line + "ray-webhook: 3 log lines were dropped because the log output could not keep up\n");
}

TEST(BatchedLogSink, AFailedWriteDropsTheBatchAndLoggingGoesOn) {
  Pipe pipe;
  const int fd = ::dup(pipe.write_end());
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(fd, NoTimer()));
  logger->info("written nowhere");
  ::close(fd);  // the sink's descriptor is gone: its next write fails with EBADF
  logger->flush();
  ASSERT_EQ(::dup2(pipe.write_end(), fd), fd);  // the same number works again
  logger->info("after the failure");
  logger->flush();
  ::close(fd);
  // The failed batch was dropped, not kept to be written again.
  EXPECT_EQ(pipe.Drain(), "info after the failure\n");
}

TEST(BatchedLogSink, ANewPatternReachesThreadsThatAlreadyLogged) {
  Pipe pipe;
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer()));
  logger->info("before");
  logger->set_pattern("[%l] %v");
  logger->info("after");
  logger->flush();
  EXPECT_EQ(pipe.Drain(), "info before\n[info] after\n");
}

TEST(BatchedLogSink, LinesFromManyThreadsArriveWholeAndInEachThreadsOrder) {
  Pipe pipe;
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer(512)));
  constexpr int kThreads = 8;
  constexpr int kLines = 200;
  const std::string seen = LogFromThreads(pipe, *logger, kThreads, [&](int t) {
    for (int i = 0; i < kLines; ++i) logger->info("t{} n{}", t, i);
  });

  std::vector<int> next(kThreads, 0);
  std::istringstream lines(seen);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    int t = -1, n = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "info t%d n%d", &t, &n), 2) << "a torn line: " << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(n, next[t]) << "thread " << t << " out of order";
    next[t] = n + 1;
    ++count;
  }
  EXPECT_EQ(count, kThreads * kLines);
}

TEST(BatchedLogSink, LinesWrapAroundTheRingWhole) {
  Pipe pipe;
  // A 256-byte ring: three lines of up to 60 bytes of text (80-byte slots) fit, and lines of
  // every length from 0 to 60 cross its end again and again.
  auto logger = LoggerOn(std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer(1 << 20, 256)));
  std::string want;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 3; ++i) {
      const std::string text(static_cast<std::size_t>((round * 7 + i * 31) % 61), static_cast<char>('a' + i));
      logger->info(text);
      want += "info " + text + "\n";
    }
    logger->flush();
  }
  EXPECT_EQ(pipe.Drain(), want);
}

TEST(BatchedLogSink, ASmallRingUnderManyThreadsDropsWholeLinesAndCountsThem) {
  Pipe pipe;
  auto sink = std::make_shared<BatchedLogSink>(pipe.write_end(), NoTimer(256, 1024));
  auto logger = LoggerOn(sink);
  constexpr int kThreads = 8;
  constexpr int kLines = 2000;
  const std::string seen = LogFromThreads(pipe, *logger, kThreads, [&](int t) {
    for (int i = 0; i < kLines; ++i) {
      logger->info("t{} n{} {}", t, i, std::string(static_cast<std::size_t>(i % 50), 'x'));
    }
  });

  std::vector<int> last(kThreads, -1);
  std::istringstream lines(seen);
  std::string line;
  std::uint64_t written = 0, reported = 0;
  while (std::getline(lines, line)) {
    unsigned long long n = 0;
    if (std::sscanf(line.c_str(), "ray-webhook: %llu log lines were dropped", &n) == 1) {
      reported += n;
      continue;
    }
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "info t%d n%d", &t, &i), 2) << "a torn line: " << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(line, "info t" + std::to_string(t) + " n" + std::to_string(i) + " " +
                        std::string(static_cast<std::size_t>(i % 50), 'x'));
    EXPECT_GT(i, last[t]) << "thread " << t << " out of order";
    last[t] = i;
    ++written;
  }
  // Every line is either written whole or counted as dropped, and every drop is reported.
  EXPECT_EQ(written + sink->dropped(), static_cast<std::uint64_t>(kThreads) * kLines);
  EXPECT_EQ(reported, sink->dropped());
}

}  // namespace
}  // namespace ray_webhook
