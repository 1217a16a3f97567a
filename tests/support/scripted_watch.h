// Scripted watches for the tests of the API's watch clients: the events
// mock-kube-api plays (tests/tools/mock_kube_watch.h), a mock started with
// a test's objects and script, and waiting for what a background thread does.
//
// Contract: StartScriptedMock writes NAME.objects.json and NAME.script.json
// into the dir, starts a mock on them with its request log at NAME.log
// (returned in *log), and returns nullptr with *error saying why when it did
// not start. Eventually polls the condition until it holds (true) or the
// limit passes (false). Header-only.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/mock_kube_api_dir.h"
#include "support/mock_kube_api_process.h"

namespace ray_webhook::testing_support {

using ScriptJson = nlohmann::ordered_json;

// One event of a watch, as the API server streams it.
inline ScriptJson WatchEvent(const std::string& type, const ScriptJson& object) {
  return {{"type", type}, {"object", object}};
}

// The 410 a watch from a compacted resourceVersion ends with.
inline ScriptJson ExpiredEvent() {
  return WatchEvent("ERROR", {{"kind", "Status"},
                              {"apiVersion", "v1"},
                              {"metadata", ScriptJson::object()},
                              {"status", "Failure"},
                              {"message", "too old resource version: 1 (2)"},
                              {"reason", "Expired"},
                              {"code", 410}});
}

// A script step that keeps the watch open until the client goes.
inline ScriptJson HangStep() { return {{"hang", true}}; }

inline std::unique_ptr<MockKubeApiProcess> StartScriptedMock(const MockKubeApiDir& dir, const std::string& name,
                                                             const ScriptJson& objects, const ScriptJson& script,
                                                             std::filesystem::path* log, std::string* error) {
  const std::filesystem::path objects_file = dir.path() / (name + ".objects.json");
  const std::filesystem::path script_file = dir.path() / (name + ".script.json");
  std::ofstream(objects_file) << objects.dump();
  std::ofstream(script_file) << script.dump();
  *log = dir.path() / (name + ".log");
  return MockKubeApiProcess::Start(dir.certs(), dir.token(), *log,
                                   {"--objects", objects_file.string(), "--watch-script", script_file.string()}, error);
}

template <typename Condition>
bool Eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace ray_webhook::testing_support
