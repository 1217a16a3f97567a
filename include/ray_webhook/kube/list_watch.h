// ListWatch: one collection of the Kubernetes API kept in view by listing it
// once and then watching it, as client-go's reflector does, instead of
// listing it again and again.
//
// Contract: Run() lists collection_path (labelSelector, limit/continue pages)
// and hands the whole set to the sink between OnListBegin and OnListEnd: an
// object not among it is gone, even one deleted while no watch ran. A list
// that fails before OnListEnd is abandoned; the next OnListBegin starts over.
// It then watches from the list's resourceVersion (watch=1,
// allowWatchBookmarks, timeoutSeconds) and hands each ADDED, MODIFIED and
// DELETED object to OnEvent, in order. Every object's resourceVersion, and
// each BOOKMARK's (never handed on), moves the version the next watch starts
// from. A list answered 404 (the collection is not served: a
// CustomResourceDefinition not installed) is told to OnNotServed and listed
// again every max_backoff, uncounted. A watch the server ends (its timeoutSeconds) is started again from
// there at once. An ERROR event with code 410, or an HTTP 410, means that
// version is gone: list again. Any other failure (no connection, another
// status, a line that is not an event, an unknown type, an event over
// max_event_bytes, no byte for idle_timeout, a watch that ends at once with
// nothing) is counted, told to OnProblem, and followed by a wait that starts
// at initial_backoff, doubles up to max_backoff, has up to a quarter added at
// random, and starts over after a watch that delivered events: never a tight
// loop. Bad input ends a watch, never the process. The objects handed on are
// each one's raw JSON text, read once with simdjson; each string_view is valid
// during its call only. Run() returns within about stop_check (200 ms while
// connecting) of stop() being true, except while a list page is read
// (bounded by page_timeout). stats() may be
// read from any thread while Run() runs on one. Never throws.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/kube/kube_api_client.h"

namespace ray_webhook {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// Why a list or a watch did not go as it should; each is counted apart.
enum class ListWatchProblem {
  kListFailed,     // a page could not be read, or was not a list
  kExpired,        // 410: the version to watch from is gone (an ERROR event or the answer's status)
  kWatchFailed,    // no connection, TLS, bad framing, a close mid-answer
  kWatchAnswered,  // a status other than 200 and 410
  kWatchIdle,      // no byte for idle_timeout
  kShortWatch,     // the server ended a watch at once with nothing in it
  kBadEvent,       // a line that is not JSON, not an event, or of an unknown type
  kEventTooLong,   // a line over max_event_bytes
  kErrorEvent,     // an ERROR event other than 410
};
inline constexpr std::size_t kListWatchProblems = 9;
std::string_view ProblemName(ListWatchProblem problem);  // "list_failed", ..., for logs and metrics

struct ListWatchOptions {
  std::string collection_path;  // "/api/v1/pods", "/apis/ray.io/v1/rayclusters"
  std::string label_selector;   // may be empty
  std::size_t page_size = 500;
  std::chrono::milliseconds page_timeout{30000};
  std::size_t max_page_bytes = 64 * 1024 * 1024;
  std::chrono::seconds watch_timeout{300};  // timeoutSeconds: the server ends each watch after this
  std::chrono::milliseconds connect_timeout{10000};
  // kube-apiserver sends a bookmark about once a minute on a quiet watch.
  std::chrono::milliseconds idle_timeout{150000};
  std::size_t max_event_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::milliseconds stop_check{200};
};

class WatchSink {
 public:
  virtual ~WatchSink() = default;
  virtual void OnListBegin() = 0;
  virtual void OnListed(std::string_view object) = 0;
  virtual void OnListEnd(std::string_view resource_version) = 0;
  // type is kAdded, kModified or kDeleted (the object's last state).
  virtual void OnEvent(WatchEventType type, std::string_view object) = 0;
  // The list was answered 404: the API does not serve the collection (a CustomResourceDefinition not
  // installed). Not a problem: Run lists again every max_backoff, and a list that succeeds starts as usual.
  virtual void OnNotServed(std::string_view reason) { (void)reason; }
  // first: the first time this problem came up, so that each kind is logged once.
  virtual void OnProblem(ListWatchProblem problem, std::string_view reason, bool first) {
    (void)problem, (void)reason, (void)first;
  }
};

struct ListWatchStats {
  std::uint64_t lists = 0;           // complete lists, the first one included
  std::uint64_t relists = 0;         // lists after the first
  std::uint64_t watches = 0;         // watch requests made
  std::uint64_t watch_restarts = 0;  // watches the server ended, followed by another
  std::uint64_t added = 0, modified = 0, deleted = 0, bookmarks = 0;
  std::array<std::uint64_t, kListWatchProblems> problems{};
  std::string resource_version;  // the one the next watch starts from
  std::string last_problem;      // the last reason, one line

  std::uint64_t count(ListWatchProblem p) const { return problems[static_cast<std::size_t>(p)]; }
};

class ListWatch {
 public:
  ListWatch(KubeApiClient& client, ListWatchOptions options, WatchSink& sink);
  ~ListWatch();
  ListWatch(const ListWatch&) = delete;
  ListWatch& operator=(const ListWatch&) = delete;

  void Run(const std::function<bool()>& stop);
  ListWatchStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
