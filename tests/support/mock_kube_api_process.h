// MockKubeApiProcess: one mock-kube-api (tests/tools/mock_kube_api.cpp) run
// by a C++ test, on a random free port, for as long as the object lives.
//
// Contract: Start() runs MOCK_KUBE_API_BIN with the certificate pair in
// certs_dir (certs/generate.sh's tls.crt and tls.key), the token, its request
// log at log_path and the extra arguments; it tries ports until one binds and
// the mock says "listening", and returns nullptr with *error saying why when
// none did. The destructor stops the mock with SIGTERM (SIGKILL after 5 s).
// The child gets SIGTERM when the test process dies. Header-only.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ray_webhook::testing_support {

class MockKubeApiProcess {
 public:
  static std::unique_ptr<MockKubeApiProcess> Start(const std::filesystem::path& certs_dir, const std::string& token,
                                                   const std::filesystem::path& log_path,
                                                   const std::vector<std::string>& args, std::string* error) {
    std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
    std::uniform_int_distribution<int> ports(20000, 60000);
    for (int attempt = 0; attempt < 30; ++attempt) {
      std::unique_ptr<MockKubeApiProcess> mock(new MockKubeApiProcess());
      bool port_busy = false;
      if (mock->Run(ports(rng), certs_dir, token, log_path, args, &port_busy, error)) return mock;
      if (!port_busy) return nullptr;
    }
    *error = "mock-kube-api found no free port in 30 tries";
    return nullptr;
  }

  ~MockKubeApiProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  int port() const { return port_; }

 private:
  MockKubeApiProcess() = default;

  static std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  bool Run(int port, const std::filesystem::path& certs_dir, const std::string& token,
           const std::filesystem::path& log_path, const std::vector<std::string>& args, bool* port_busy,
           std::string* error) {
    const std::string stderr_path = log_path.string() + ".stderr";
    std::vector<std::string> words = {MOCK_KUBE_API_BIN,
                                      "--port",
                                      std::to_string(port),
                                      "--tls-cert",
                                      (certs_dir / "tls.crt").string(),
                                      "--tls-key",
                                      (certs_dir / "tls.key").string(),
                                      "--token",
                                      token,
                                      "--log",
                                      log_path.string()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      *error = "pipe2 failed";
      return false;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      *error = "fork failed";
      close(fds[0]);
      close(fds[1]);
      return false;
    }
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      dup2(fds[1], STDOUT_FILENO);
      const int errfd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (errfd >= 0) dup2(errfd, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (out.find("listening\n") == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[256];
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;  // EOF: the mock exited
      out.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    if (out.find("listening\n") != std::string::npos) {
      pid_ = pid;
      port_ = port;
      return true;
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string stderr_text = ReadFile(stderr_path);
    *port_busy = stderr_text.find("cannot listen") != std::string::npos;
    *error = "mock-kube-api did not start on port " + std::to_string(port) + ": " + stderr_text;
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace ray_webhook::testing_support
