// MockKubeApiDir: the folder a test of a Kubernetes API client keeps beside
// its mock-kube-api: a certificate pair made by certs/generate.sh, the token
// file, and whatever the test writes there (objects, watch scripts, logs).
//
// Contract: Create() makes it under the temporary folder and returns nullptr
// with *error saying why when certs/generate.sh fails. Config(port) is the
// KubeApiConfig that reaches a mock started with certs() and token() on that
// port. The folder is removed with the object, unless RAY_WEBHOOK_KEEP_TEST_DIR
// is set. Header-only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "ray_webhook/kube/kube_api_client.h"

namespace ray_webhook::testing_support {

class MockKubeApiDir {
 public:
  static std::unique_ptr<MockKubeApiDir> Create(const std::string& prefix, const std::string& token,
                                                std::string* error) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      *error = "mkdtemp failed";
      return nullptr;
    }
    std::unique_ptr<MockKubeApiDir> dir(new MockKubeApiDir(tmpl, token));
    const std::string cmd = "bash '" + std::string(CERTS_SCRIPT) + "' --out '" + dir->certs().string() + "' 2>'" +
                            (dir->path() / "certs.log").string() + "'";
    if (std::system(cmd.c_str()) != 0) {
      *error = cmd + " failed";
      return nullptr;
    }
    std::ofstream(dir->path() / "token") << token;
    return dir;
  }

  ~MockKubeApiDir() {
    std::error_code ec;
    if (!std::getenv("RAY_WEBHOOK_KEEP_TEST_DIR")) std::filesystem::remove_all(path_, ec);
  }
  MockKubeApiDir(const MockKubeApiDir&) = delete;
  MockKubeApiDir& operator=(const MockKubeApiDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path certs() const { return path_ / "certs"; }
  const std::string& token() const { return token_; }

  KubeApiConfig Config(int port) const {
    KubeApiConfig config;
    config.server = "https://127.0.0.1:" + std::to_string(port);
    config.token_file = (path_ / "token").string();
    config.ca_file = (certs() / "ca.crt").string();
    return config;
  }

 private:
  MockKubeApiDir(std::filesystem::path path, std::string token) : path_(std::move(path)), token_(std::move(token)) {}

  std::filesystem::path path_;
  std::string token_;
};

}  // namespace ray_webhook::testing_support
