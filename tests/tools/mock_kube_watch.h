// WatchScript: the watches of mock-kube-api, played from a script the test
// writes, so that a test of a watch client decides each watch's events,
// failures and end.
//
// Contract: the script is {"watches": [WATCH, ...]}, and may hold
// {"by_resource": {"pods": [WATCH, ...], ...}} as well: the n-th watch
// request of a resource listed there plays its n-th WATCH; the n-th of any
// other, the n-th of "watches". A WATCH is a list of steps in order:
//   {"type": T, "object": O}   one event line, written in two chunks (split
//                              mid-line), and applied to the mock's objects
//                              (ADDED/MODIFIED replace, DELETED removes) so
//                              that a later list sees it; BOOKMARK and ERROR
//                              are written only
//   {"apply": {"type": T, "object": O}}  applied, not written: a change made
//                              while no watch ran
//   {"raw": "TEXT"}            TEXT and a newline, as is (garbage)
//   {"long_line": N}           a line of N bytes
//   {"sleep_ms": N}            a pause
//   {"hang": true}             no more bytes until the mock stops
//   {"status": CODE}           (first step only) the answer is CODE with a
//                              metav1.Status body, not a stream
// After its last step a watch ends, as timeoutSeconds ends one. A watch past
// the script's last hangs, as does every watch without a script. Thread-safe.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace mock_kube_api {

using Json = nlohmann::ordered_json;

// A change to the mock's objects ({"items": [...]}): ADDED and MODIFIED
// replace the object of that kind, namespace and name, DELETED removes it;
// the object's resourceVersion becomes the lists' (*list_version).
void ApplyChange(const std::string& type, const Json& object, Json* objects, std::string* list_version);

class WatchScript {
 public:
  explicit WatchScript(Json script) : script_(std::move(script)) {}

  // hang(ms): sleeps up to ms, false once the mock is stopping. apply(type,
  // object): changes the mock's objects. set_status(res, code): a Status answer.
  struct Hooks {
    std::function<bool(long long ms)> hang;
    std::function<void(const std::string& type, const Json& object)> apply;
    std::function<void(httplib::Response& res, int code)> set_status;
  };
  void Answer(httplib::Response& res, const std::string& resource, const Hooks& hooks);

 private:
  Json NextWatch(const std::string& resource);

  std::mutex mutex_;
  Json script_;
  std::size_t next_ = 0;
  std::map<std::string, std::size_t> next_by_resource_;
};

}  // namespace mock_kube_api
