// ray-webhook: entry point. Parses the command line, then reviews one file
// offline, audits files or the live cluster, or runs the HTTPS server until
// SIGTERM or SIGINT.
#include <malloc.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "audit_command.h"
#include "command_line.h"
#include "ray_webhook/core/review/review_handler.h"
#include "ray_webhook/logging/batched_log_sink.h"
#include "ray_webhook/logging/log_line_formatter.h"
#include "ray_webhook/server/webhook_server.h"

namespace {

using namespace ray_webhook;

int RunReview(const Command& cmd) {
  std::string body;
  if (cmd.input == "-") {
    body.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(cmd.input, std::ios::binary);
    if (!in) {
      std::cerr << "ray-webhook: cannot read " << cmd.input << "\n";
      return 1;
    }
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ReviewDecoder decoder;
  ReviewOutcome out = HandleReview(body, cmd.endpoint, cmd.config.policy, decoder);
  std::cout << out.body << "\n";
  if (out.http_status != 200) {
    std::cerr << "ray-webhook: " << out.error << "\n";
    return 1;
  }
  return 0;
}

int RunServe(const ServerConfig& config, const std::string& log_level) {
  // Signals are taken by one thread with sigwait, so no handler touches shared
  // state. Blocked before any thread starts (the log writer included): every
  // thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A peer that closed makes a write raise SIGPIPE; the write's error is enough.
  std::signal(SIGPIPE, SIG_IGN);
  // Buffers of 1 MiB and more (a large request body, a decoder grown for one)
  // come from mmap and go back to the kernel when freed. By default glibc raises
  // that threshold to the size of each such block freed (up to 32 MiB,
  // mallopt(3)); large buffers then come from the heap and stay resident: 16
  // connections sending 2 MB reviews left the server at 63-67 MB for good, idle
  // decoders shrunk or not, against 14 MB with the threshold fixed
  // (bench/journal/25-large-reviews-release-memory.md).
  mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
  // Logs go to stderr, leaving stdout to answers (review) and to nothing
  // (serve). Lines are batched in memory and written by the sink's thread
  // twice a second, at once from warn level up, and at exit.
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("ray-webhook", std::make_shared<BatchedLogSink>(STDERR_FILENO)));
  spdlog::set_level(spdlog::level::from_str(log_level));
  // Lines read "2026-11-30T18:05:47.123456Z info message" (UTC).
  spdlog::set_formatter(std::make_unique<LogLineFormatter>());

  WebhookServer server(config);
  if (Status bound = server.Bind(); !bound.ok()) {
    spdlog::critical("{}", bound.message());
    spdlog::shutdown();
    return 1;
  }
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    if (!server.Shutdown()) {
      spdlog::warn("shutdown grace period of {}ms ran out; closed the connections still open",
                   config.shutdown_grace.count());
    }
  });
  spdlog::info("serving on https://{}:{} cluster_domain={} probes={}", config.bind_address, config.port,
               config.policy.cluster_domain,
               config.probe_port == 0 ? std::string("off")
                                      : "http://" + config.bind_address + ":" + std::to_string(config.probe_port));
  server.Serve();
  stopper.join();
  spdlog::info("stopped");
  spdlog::shutdown();  // writes the last batch
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that stops early (`ray-webhook --help | grep -q`, `ray-webhook audit | head`) must not end
  // the process with SIGPIPE: the write fails instead, and the exit status stays the command's own.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv, argv + argc);
  Result<Command> parsed = ParseCommandLine(args, [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  });
  if (!parsed.ok()) {
    std::cerr << "ray-webhook: " << parsed.error() << "\n";
    return 2;
  }
  const Command& cmd = *parsed;
  switch (cmd.kind) {
    case CommandKind::kHelp: std::cout << UsageText(); return 0;
    case CommandKind::kVersion: std::cout << "ray-webhook " << RAY_WEBHOOK_VERSION << "\n"; return 0;
    case CommandKind::kReview: return RunReview(cmd);
    case CommandKind::kAudit: return RunAudit(cmd, std::cin, std::cout, std::cerr);
    case CommandKind::kServe: return RunServe(cmd.config, cmd.log_level);
  }
  return 2;
}
