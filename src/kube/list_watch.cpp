#include "ray_webhook/kube/list_watch.h"

#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include "ray_webhook/mutex.h"
#include "watch_event.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A watch that ends sooner than this with nothing in it is a failure, as
// client-go's reflector counts a "very short watch": re-watching at once would spin.
constexpr milliseconds kShortestWatch{1000};

// How a list ended.
enum class ListEnd { kListed, kFailed, kNotServed };

// How one watch ended, as far as Run's next step goes.
enum class WatchEnd { kAgain, kRelist, kBackOff, kStopped };

}  // namespace

std::string_view ProblemName(ListWatchProblem problem) {
  switch (problem) {
    case ListWatchProblem::kListFailed: return "list_failed";
    case ListWatchProblem::kExpired: return "expired";
    case ListWatchProblem::kWatchFailed: return "watch_failed";
    case ListWatchProblem::kWatchAnswered: return "watch_answered";
    case ListWatchProblem::kWatchIdle: return "watch_idle";
    case ListWatchProblem::kShortWatch: return "short_watch";
    case ListWatchProblem::kBadEvent: return "bad_event";
    case ListWatchProblem::kEventTooLong: return "event_too_long";
    case ListWatchProblem::kErrorEvent: return "error_event";
  }
  return "unknown";
}

struct ListWatch::Impl {
  Impl(KubeApiClient& c, ListWatchOptions o, WatchSink& s)
      : client(c), options(std::move(o)), sink(s), backoff(options.initial_backoff) {}

  KubeApiClient& client;
  const ListWatchOptions options;
  WatchSink& sink;
  WatchEventReader reader;
  std::string resource_version;  // only Run's thread writes it; stats holds the copy others read
  std::uint64_t delivered = 0;   // events the last watch handed on
  milliseconds backoff;
  std::mt19937 random{std::random_device{}()};
  mutable Mutex mutex;
  ListWatchStats stats GUARDED_BY(mutex);

  void Problem(ListWatchProblem problem, std::string_view reason) EXCLUDES(mutex) {
    bool first = false;
    {
      MutexLock lock(&mutex);
      std::uint64_t& n = stats.problems[static_cast<std::size_t>(problem)];
      first = n++ == 0;
      stats.last_problem = std::string(ProblemName(problem)) + ": " + std::string(reason);
    }
    sink.OnProblem(problem, reason, first);
  }

  template <typename Change>
  void Count(Change change) EXCLUDES(mutex) {
    MutexLock lock(&mutex);
    change(stats);
  }

  void SetVersion(std::string_view version) EXCLUDES(mutex) {
    if (version.empty()) return;
    resource_version.assign(version);
    Count([&](ListWatchStats& s) { s.resource_version = resource_version; });
  }

  // Waits, asking stop every stop_check at most; false when stop said so.
  bool Wait(milliseconds pause, const std::function<bool()>& stop) {
    const Clock::time_point until = Clock::now() + pause;
    for (;;) {
      if (stop && stop()) return false;
      const Clock::time_point now = Clock::now();
      if (now >= until) return true;
      std::this_thread::sleep_for(std::min<Clock::duration>(until - now, options.stop_check));
    }
  }

  bool BackOff(const std::function<bool()>& stop) {
    std::uniform_int_distribution<long long> jitter(0, backoff.count() / 4);
    const milliseconds pause = backoff + milliseconds(jitter(random));
    backoff = std::min(backoff * 2, options.max_backoff);
    return Wait(pause, stop);
  }

  std::string Query(std::string_view first) const {
    std::string path = options.collection_path + "?" + std::string(first);
    if (!options.label_selector.empty()) path += "&labelSelector=" + UrlEncode(options.label_selector);
    return path;
  }

  // Lists every page; kFailed after a problem (or a stop).
  ListEnd List(const std::function<bool()>& stop) {
    sink.OnListBegin();
    std::string continue_token;
    std::string list_version;
    for (;;) {
      if (stop && stop()) return ListEnd::kFailed;
      std::string path = Query("limit=" + std::to_string(options.page_size));
      if (!continue_token.empty()) path += "&continue=" + UrlEncode(continue_token);
      Result<KubeApiClient::Answer> answer = client.Get(path, options.page_timeout, options.max_page_bytes);
      if (!answer.ok()) return ListFailed(answer.error());
      if (answer->status == 404) {
        sink.OnNotServed("the Kubernetes API answered 404: " + ApiErrorMessage(answer->body));
        return ListEnd::kNotServed;
      }
      if (answer->status != 200) {
        return ListFailed("the Kubernetes API answered " + std::to_string(answer->status) + ": " +
                          ApiErrorMessage(answer->body));
      }
      Result<ListPageMeta> page =
          reader.ReadListPage(answer->body, [&](std::string_view item) { sink.OnListed(item); });
      if (!page.ok()) return ListFailed(page.error());
      // Every page of one list has the first page's version; the last one's is as good.
      list_version = page->resource_version;
      continue_token = page->continue_token;
      if (continue_token.empty()) break;
    }
    // A page's parser and padded copy hold several times its size (tens of MB for 500 Pods); watch
    // events are a few KB each.
    reader = WatchEventReader();
    sink.OnListEnd(list_version);
    resource_version = list_version;
    Count([&](ListWatchStats& s) {
      s.relists += s.lists > 0 ? 1 : 0;
      ++s.lists;
      s.resource_version = list_version;
    });
    return ListEnd::kListed;
  }

  ListEnd ListFailed(const std::string& reason) {
    Problem(ListWatchProblem::kListFailed, "listing " + options.collection_path + ": " + reason);
    return ListEnd::kFailed;
  }

  WatchEnd Watch(const std::function<bool()>& stop) {
    const std::string path =
        Query("watch=1&resourceVersion=" + UrlEncode(resource_version) +
              "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(options.watch_timeout.count()));
    StreamLimits limits;
    limits.connect_timeout = options.connect_timeout;
    limits.idle_timeout = options.idle_timeout;
    // The server ends the watch at timeoutSeconds; a minute more, and it is not going to.
    const Clock::time_point started = Clock::now();
    limits.deadline = started + options.watch_timeout + std::chrono::seconds(60);
    limits.max_line_bytes = options.max_event_bytes;
    limits.stop_check = options.stop_check;
    Count([](ListWatchStats& s) { ++s.watches; });

    delivered = 0;
    bool expired = false;
    std::optional<ListWatchProblem> bad;
    const StreamLineSink on_line = [&](std::string_view line) -> Status {
      Result<WatchEvent> event = reader.ReadEvent(line);
      if (!event.ok()) {
        bad = ListWatchProblem::kBadEvent;
        return event.status();
      }
      switch (event->type) {
        case WatchEventType::kBookmark:
          SetVersion(event->resource_version);
          Count([](ListWatchStats& s) { ++s.bookmarks; });
          return Status::Ok();
        case WatchEventType::kError:
          expired = event->status_code == 410;
          if (!expired) bad = ListWatchProblem::kErrorEvent;
          return Status::Error("an ERROR event, code " + std::to_string(event->status_code) + ": " +
                               std::string(event->status_message.substr(0, 200)));
        case WatchEventType::kAdded:
        case WatchEventType::kModified:
        case WatchEventType::kDeleted: break;
      }
      sink.OnEvent(event->type, event->object);
      ++delivered;
      SetVersion(event->resource_version);
      Count([&](ListWatchStats& s) {
        ++(event->type == WatchEventType::kAdded      ? s.added
           : event->type == WatchEventType::kModified ? s.modified
                                                      : s.deleted);
      });
      return Status::Ok();
    };
    const StreamEnd end = client.Stream(path, limits, on_line, stop);
    if (delivered > 0) backoff = options.initial_backoff;
    using How = StreamEnd::How;
    switch (end.how) {
      case How::kStopped: return WatchEnd::kStopped;
      case How::kEnded:
      case How::kDeadline:
        if (delivered == 0 && Clock::now() - started < kShortestWatch) {
          Problem(ListWatchProblem::kShortWatch, "the watch ended at once with nothing in it");
          return WatchEnd::kBackOff;
        }
        Count([](ListWatchStats& s) { ++s.watch_restarts; });
        return WatchEnd::kAgain;
      case How::kAnswered:
        if (end.status == 410) {
          Problem(ListWatchProblem::kExpired, "the Kubernetes API answered 410: " + ApiErrorMessage(end.body));
          return WatchEnd::kRelist;
        }
        Problem(ListWatchProblem::kWatchAnswered,
                "the Kubernetes API answered " + std::to_string(end.status) + ": " + ApiErrorMessage(end.body));
        return WatchEnd::kBackOff;
      case How::kRefused:
        if (expired) {
          Problem(ListWatchProblem::kExpired, end.reason);
          return WatchEnd::kRelist;
        }
        Problem(bad.value_or(ListWatchProblem::kBadEvent), end.reason);
        return WatchEnd::kBackOff;
      case How::kLineTooLong: Problem(ListWatchProblem::kEventTooLong, end.reason); return WatchEnd::kBackOff;
      case How::kIdle: Problem(ListWatchProblem::kWatchIdle, end.reason); return WatchEnd::kBackOff;
      case How::kBroken: Problem(ListWatchProblem::kWatchFailed, end.reason); return WatchEnd::kBackOff;
    }
    return WatchEnd::kBackOff;
  }

  void Run(const std::function<bool()>& stop) {
    bool listed = false;
    while (!(stop && stop())) {
      bool just_listed = false;
      if (!listed) {
        const ListEnd list = List(stop);
        if (list == ListEnd::kNotServed) {
          if (!Wait(options.max_backoff, stop)) return;
          continue;
        }
        if (list == ListEnd::kFailed) {
          if (!BackOff(stop)) return;
          continue;
        }
        listed = just_listed = true;
      }
      switch (Watch(stop)) {
        case WatchEnd::kStopped: return;
        case WatchEnd::kAgain: break;
        case WatchEnd::kRelist:
          listed = false;
          // A list whose version is gone before one event came calls for a wait, not another list at once.
          if (just_listed && delivered == 0 && !BackOff(stop)) return;
          break;
        case WatchEnd::kBackOff:
          if (!BackOff(stop)) return;
          break;
      }
    }
  }
};

ListWatch::ListWatch(KubeApiClient& client, ListWatchOptions options, WatchSink& sink)
    : impl_(std::make_unique<Impl>(client, std::move(options), sink)) {}
ListWatch::~ListWatch() = default;

void ListWatch::Run(const std::function<bool()>& stop) { impl_->Run(stop); }

ListWatchStats ListWatch::stats() const {
  MutexLock lock(&impl_->mutex);
  return impl_->stats;
}

}  // namespace ray_webhook
