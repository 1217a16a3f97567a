#include "connection_loop.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ray_webhook/http/answer_writer.h"
#include "ray_webhook/net/peer_addresses.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

// A request's buffer starts this small and doubles: a KubeRay Pod's review
// (about 6 KB with its head) fits without a second allocation, and 1,000
// connections stalled inside a request hold 8 MiB, not 16.
constexpr std::size_t kFirstBuffer = 8 * 1024;
// Read beyond the head's limit, so the scanner sees a head that is too long.
constexpr std::size_t kReadChunk = 16 * 1024;
// Requests served from one connection before the loop turns to the others.
constexpr int kRequestsPerTurn = 4;
// A connection that has not sent a request yet, when idle ones are being
// closed: Go's http.Server waits 5 s for such a one in Shutdown.
constexpr std::chrono::milliseconds kFreshConnectionGrace{2000};
// How often deadlines are checked while a connection has one running.
constexpr std::chrono::milliseconds kBusyTick{100};
constexpr std::chrono::milliseconds kIdleTick{1000};

enum class Io { kDone, kWantRead, kWantWrite, kEof, kError };

// Runs requests that may wait (the Kubernetes API lookup) off the event
// loops. Workers start on demand up to max and stay until Stop().
class BlockingPool {
 public:
  explicit BlockingPool(std::size_t max) : max_(std::max<std::size_t>(max, 1)) {}

  void Submit(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
    if (idle_ == 0 && threads_.size() < max_) {
      try {
        threads_.emplace_back([this] { Work(); });
      } catch (const std::system_error&) {
        // Out of threads: the job waits for a worker there is.
      }
    }
    ready_.notify_one();
  }

  // After the last Submit: runs what is queued and joins the workers.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_.size();
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty()) return;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const std::size_t max_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace

// What an epoll event points at: a listener, a connection, or (null) the wake descriptor.
struct Pollable {
  bool listener;
};

struct Listener : Pollable {
  Listener(int f, SSL_CTX* c, HttpHandler& h) : Pollable{true}, fd(f), ctx(c), handler(h) {}
  const int fd;
  SSL_CTX* const ctx;
  HttpHandler& handler;
};

struct EventLoop;

struct Connection : Pollable {
  enum class Phase { kHandshake, kRead, kJob, kWrite, kLinger };
  Connection() : Pollable{false} {}

  EventLoop* loop = nullptr;
  Listener* listener = nullptr;
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = Phase::kRead;
  std::size_t index = 0;  // in its loop's list

  // Received, not yet answered: a request being framed, and what follows it.
  char* in = nullptr;
  std::size_t in_size = 0, in_capacity = 0;
  HeadScanner scanner;
  bool head_parsed = false;
  RequestHead head;
  bool continue_sent = false;

  std::string out;
  std::size_t out_sent = 0;
  bool answer_in_out = false;  // out holds an answer, not a 100 Continue
  bool close_after_write = false;
  bool job_close = false;

  std::uint32_t interest = EPOLLIN;
  bool registered = true;
  bool pending = false;  // in its loop's pending list
  bool cut = false;      // shut down by its deadline while a worker had it
  bool used = false;     // answered a request
  std::size_t served = 0;
  bool busy = false;  // a handshake or request is under way
  Clock::time_point accepted_at, busy_since, idle_since, linger_since;
  PeerAddresses addresses;
};

struct JobDone {
  Connection* connection;
  HttpAnswer answer;
};

struct ConnectionLoop::Impl {
  explicit Impl(Options o) : options(o), pool(o.max_blocking_workers) {}

  const Options options;
  std::vector<std::unique_ptr<Listener>> listeners;
  std::vector<std::unique_ptr<EventLoop>> loops;
  BlockingPool pool;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> buffered{0};
  std::atomic<std::size_t> cut{0}, shed{0}, refused{0}, busy_polls{0};
  std::atomic<bool> accepting{true}, closing_idle{false}, stopping{false};
  std::atomic<bool> polling{false};
  std::atomic<std::size_t> listeners_open{0};  // loops that still listen
  bool stopped = false;
};

struct EventLoop {
  explicit EventLoop(ConnectionLoop::Impl& i) : impl(i), o(i.options) {}

  ConnectionLoop::Impl& impl;
  const ConnectionLoop::Options& o;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::thread thread;
  std::vector<Connection*> conns;
  std::vector<Connection*> pending;
  std::mutex done_mutex;
  std::vector<JobDone> done;
  std::size_t jobs = 0;
  bool listening = false;
  bool listeners_paused = false;
  Clock::time_point resume_listeners_at;
  Clock::time_point next_scan;
  bool poll_next = false;
  // A connection has a deadline running (a handshake, a request, a linger):
  // deadlines are then checked every kBusyTick, else every kIdleTick.
  bool timers_armed = false;
  Clock::time_point now;

  Status Open() {
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    if (epoll_fd < 0 || wake_fd < 0 || ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
      return Status::Error(std::string("cannot set up an event loop: ") + std::strerror(errno));
    }
    return Listen();
  }

  Status Listen() {
    for (auto& l : impl.listeners) {
      epoll_event ev{};
      // One loop is woken per new connection, not all of them.
      ev.events = EPOLLIN | EPOLLEXCLUSIVE;
      ev.data.ptr = static_cast<Pollable*>(l.get());
      if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, l->fd, &ev) != 0) {
        return Status::Error(std::string("cannot watch a listening socket: ") + std::strerror(errno));
      }
    }
    listening = true;
    return Status::Ok();
  }

  void Unlisten() {
    for (auto& l : impl.listeners) ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, l->fd, nullptr);
  }

  void Wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  void PostDone(JobDone d) {
    {
      std::lock_guard<std::mutex> lock(done_mutex);
      done.push_back(std::move(d));
    }
    Wake();
  }

  // ---- the loop ----

  void Run() {
    epoll_event events[64];
    next_scan = Clock::now();
    for (;;) {
      now = Clock::now();
      if (listening && !impl.accepting) StopListening();
      if (impl.stopping && jobs == 0) break;
      if (impl.stopping) CloseAllButJobs();
      const int n = Wait(events, 64, Timeout());
      now = Clock::now();
      for (int i = 0; i < n; ++i) {
        auto* p = static_cast<Pollable*>(events[i].data.ptr);
        if (p == nullptr) {
          std::uint64_t value;
          [[maybe_unused]] const ssize_t r = ::read(wake_fd, &value, sizeof value);
        } else if (p->listener) {
          if (listening) Accept(static_cast<Listener*>(p));
        } else {
          OnEvent(static_cast<Connection*>(p), events[i].events);
        }
      }
      TakeDone();
      RunPending();
      if (now >= next_scan) Scan();
    }
    CloseAllButJobs();
  }

  int Timeout() const {
    if (!pending.empty()) return 0;
    if (impl.stopping) return static_cast<int>(kBusyTick.count());
    if (conns.empty() && !listeners_paused) return -1;
    const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_scan - now).count();
    return static_cast<int>(std::clamp<std::int64_t>(until, 0, kIdleTick.count()));
  }

  void ArmTimers() {
    timers_armed = true;
    next_scan = std::min(next_scan, now + kBusyTick);
  }

  int Wait(epoll_event* events, int max, int timeout_ms) {
    if (o.busy_poll.count() > 0 && poll_next && timeout_ms != 0 && !impl.polling.exchange(true)) {
      // One quick client: its next request comes within microseconds, and a
      // sleep would add the wake-up of a halted CPU to each round trip.
      impl.busy_polls.fetch_add(1, std::memory_order_relaxed);
      const Clock::time_point until = Clock::now() + o.busy_poll;
      int n;
      do {
        n = ::epoll_wait(epoll_fd, events, max, 0);
      } while (n == 0 && Clock::now() < until);
      impl.polling.store(false);
      if (n != 0) {
        poll_next = n == 1;
        return n;
      }
    }
    const Clock::time_point start = Clock::now();
    const int n = ::epoll_wait(epoll_fd, events, max, timeout_ms);
    // Several ready connections come in batches that a sleep lets gather;
    // after a long wait (an idle spell) sleep at once again.
    poll_next = n == 1 && Clock::now() - start <= o.busy_poll;
    return n < 0 ? 0 : n;
  }

  // ---- accepting ----

  void Accept(Listener* l) {
    for (int i = 0; i < 64; ++i) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(l->fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && ShedOldestIdle()) continue;
        if (errno == EMFILE || errno == ENFILE) PauseListeners();
        return;
      }
      // The slot is taken before the check, so two loops never both take the last one.
      if (impl.connections.fetch_add(1) >= o.max_connections && !ShedOldestIdle()) {
        impl.connections.fetch_sub(1);
        impl.refused.fetch_add(1, std::memory_order_relaxed);
        ::close(fd);
        continue;
      }
      if (!Adopt(l, fd, addr)) impl.connections.fetch_sub(1);
    }
  }

  void PauseListeners() {
    // Out of descriptors with nothing idle to close: a level-triggered
    // listener would wake this loop at once, over and over.
    Unlisten();
    listeners_paused = true;
    resume_listeners_at = now + kBusyTick;
    ArmTimers();
  }

  void StopListening() {
    // What is queued was accepted by the kernel for this server: serve it.
    for (auto& l : impl.listeners) Accept(l.get());
    if (!listeners_paused) Unlisten();
    listening = false;
    listeners_paused = false;
    if (impl.listeners_open.fetch_sub(1) == 1) {
      for (auto& l : impl.listeners) ::shutdown(l->fd, SHUT_RDWR);
    }
  }

  // Serves fd from now on, in the slot Accept took; false when it could not (fd closed).
  bool Adopt(Listener* l, int fd, const sockaddr_storage& peer) {
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    auto* c = new Connection();
    c->loop = this;
    c->listener = l;
    c->fd = fd;
    c->addresses = PeerAddressesOf(fd, peer);
    if (l->ctx != nullptr) {
      c->ssl = SSL_new(l->ctx);
      if (c->ssl == nullptr || SSL_set_fd(c->ssl, fd) != 1) {
        SSL_free(c->ssl);
        ::close(fd);
        delete c;
        return false;
      }
      SSL_set_accept_state(c->ssl);
      c->phase = Connection::Phase::kHandshake;
    }
    c->accepted_at = c->idle_since = now;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = static_cast<Pollable*>(c);
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      SSL_free(c->ssl);
      ::close(fd);
      delete c;
      return false;
    }
    c->index = conns.size();
    conns.push_back(c);
    return true;
  }

  // Idle as far as this loop knows: no request under way, nothing buffered here or in OpenSSL.
  static bool LooksIdle(const Connection* c) {
    if (c->busy || c->in_size != 0) return false;
    if (c->phase != Connection::Phase::kRead && c->phase != Connection::Phase::kHandshake) return false;
    return c->ssl == nullptr || SSL_has_pending(c->ssl) != 1;
  }

  // Nothing the peer sent is waiting: neither in the buffer, in OpenSSL, nor in the socket.
  static bool NothingPending(const Connection* c) {
    int queued = 0;
    return LooksIdle(c) && ::ioctl(c->fd, FIONREAD, &queued) == 0 && queued == 0;
  }

  bool ShedOldestIdle() {
    // One pass without system calls; the socket is asked only about the
    // oldest (an ioctl on each of 2,000 connections, for each of 1,000 new
    // ones, took over a second). One that has bytes waiting is passed over.
    Connection* oldest = nullptr;
    std::vector<Connection*> passed;
    for (int tries = 0; tries < 8; ++tries) {
      oldest = nullptr;
      for (Connection* c : conns) {
        if (LooksIdle(c) && (oldest == nullptr || c->idle_since < oldest->idle_since) &&
            std::find(passed.begin(), passed.end(), c) == passed.end()) {
          oldest = c;
        }
      }
      if (oldest == nullptr || NothingPending(oldest)) break;
      passed.push_back(oldest);
      oldest = nullptr;
    }
    if (oldest == nullptr) return false;
    impl.shed.fetch_add(1, std::memory_order_relaxed);
    if (oldest->ssl != nullptr && SSL_is_init_finished(oldest->ssl)) SSL_shutdown(oldest->ssl);
    Close(oldest);
    return true;
  }

  // ---- serving ----

  void OnEvent(Connection* c, std::uint32_t events) {
    if (c->phase == Connection::Phase::kJob) {
      // A hung-up socket stays ready; it is closed when the worker is done.
      if ((events & (EPOLLHUP | EPOLLERR)) != 0) Deregister(c);
      return;
    }
    Advance(c);
  }

  void Want(Connection* c, std::uint32_t events) {
    if (!c->registered || c->interest == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = static_cast<Pollable*>(c);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
    c->interest = events;
  }

  void Deregister(Connection* c) {
    if (!c->registered) return;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
    c->registered = false;
  }

  void MarkBusy(Connection* c) {
    if (c->busy) return;
    c->busy = true;
    c->busy_since = now;
    ArmTimers();
  }

  void AddPending(Connection* c) {
    if (c->pending) return;
    c->pending = true;
    pending.push_back(c);
  }

  void RunPending() {
    std::vector<Connection*> batch;
    batch.swap(pending);
    for (Connection* c : batch) c->pending = false;
    // A connection closed by an earlier one in the batch has left it (Close).
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (batch[i] != nullptr) {
        current_batch_ = &batch;
        Advance(batch[i]);
        current_batch_ = nullptr;
      }
    }
  }
  std::vector<Connection*>* current_batch_ = nullptr;

  void Advance(Connection* c) {
    int requests = 0;
    for (;;) {
      switch (c->phase) {
        case Connection::Phase::kHandshake: {
          MarkBusy(c);
          ERR_clear_error();
          const int r = SSL_do_handshake(c->ssl);
          if (r == 1) {
            c->phase = Connection::Phase::kRead;
            // Waiting for the first request counts as idle, not as the handshake.
            c->busy = false;
            c->idle_since = now;
            continue;
          }
          const int e = SSL_get_error(c->ssl, r);
          if (e == SSL_ERROR_WANT_READ) return Want(c, EPOLLIN);
          if (e == SSL_ERROR_WANT_WRITE) return Want(c, EPOLLOUT);
          return Close(c);
        }
        case Connection::Phase::kRead: {
          if (requests >= kRequestsPerTurn) {
            // The others first; pending runs it again after this round.
            AddPending(c);
            return;
          }
          switch (Frame(c)) {
            case FrameStep::kAnswered: ++requests; continue;
            case FrameStep::kWriting: continue;
            case FrameStep::kStopped: return;
            case FrameStep::kNeedMore: break;
          }
          switch (Fill(c)) {
            case Io::kDone: continue;
            case Io::kWantRead: return Want(c, EPOLLIN);
            case Io::kWantWrite: return Want(c, EPOLLOUT);
            case Io::kEof:
            case Io::kError: return Close(c);
          }
          return;
        }
        case Connection::Phase::kWrite: {
          switch (Flush(c)) {
            case Io::kDone: break;
            case Io::kWantWrite: return Want(c, EPOLLOUT);
            case Io::kWantRead: return Want(c, EPOLLIN);
            default: return Close(c);
          }
          if (c->close_after_write) return StartLinger(c);
          if (c->answer_in_out) {
            c->answer_in_out = false;
            c->busy = false;
            c->idle_since = now;
          }
          c->phase = Connection::Phase::kRead;
          continue;
        }
        case Connection::Phase::kLinger: return DrainLinger(c);
        case Connection::Phase::kJob: return;
      }
    }
  }

  enum class FrameStep { kNeedMore, kAnswered, kWriting, kStopped };

  HttpHandler& HandlerOf(const Connection* c) const { return c->listener->handler; }

  // Writes the answer to the current request into out; close is settled here, before its first byte.
  void Write(Connection* c, const HttpAnswer& answer, bool close) {
    AnswerFraming framing;
    framing.close = close;
    framing.head_only = c->head_parsed && c->head.method == "HEAD";
    framing.keep_alive_seconds =
        std::max<long>(1, std::chrono::duration_cast<std::chrono::seconds>(o.idle_timeout).count());
    framing.keep_alive_max = o.max_requests_per_connection;
    c->out.clear();
    c->out_sent = 0;
    WriteAnswer(answer, framing, &c->out);
  }

  FrameStep Frame(Connection* c) {
    if (!c->head_parsed) {
      const std::string_view buffered(c->in, c->in_size);
      switch (c->scanner.Scan(buffered, o.limits)) {
        case HeadScanner::State::kNeedMore:
          if (c->in_size > 0) MarkBusy(c);
          return FrameStep::kNeedMore;
        case HeadScanner::State::kRefused: RefuseAndClose(c, c->scanner.refusal()); return FrameStep::kWriting;
        case HeadScanner::State::kComplete: break;
      }
      MarkBusy(c);
      Refusal refusal;
      if (!ParseRequestHead(buffered.substr(0, c->scanner.head_bytes()), o.limits, &c->head, &refusal)) {
        RefuseAndClose(c, refusal);
        return FrameStep::kWriting;
      }
      c->head_parsed = true;
      if (c->head.content_length > 0) {
        if (const Refusal refused = HandlerOf(c).CheckHead(c->head)) {
          // Answered from the head alone; the unread body is dropped while lingering.
          Write(c, AnswerOf(refused), true);
          ConsumeAll(c);
          c->close_after_write = true;
          c->answer_in_out = true;
          c->phase = Connection::Phase::kWrite;
          return FrameStep::kWriting;
        }
      }
    }
    const std::size_t need = c->scanner.head_bytes() + c->head.content_length;
    if (c->in_size < need) {
      if (c->head.expect_continue && !c->continue_sent) {
        c->continue_sent = true;
        c->out.clear();
        c->out_sent = 0;
        WriteContinue(&c->out);
        c->phase = Connection::Phase::kWrite;
        return FrameStep::kWriting;
      }
      return FrameStep::kNeedMore;
    }
    return Dispatch(c);
  }

  // The buffer's bytes after the current request's body: readable, so the
  // review can be parsed in place.
  static std::size_t BodyPadding(const Connection* c) {
    return c->in_capacity - c->scanner.head_bytes() - c->head.content_length;
  }

  FrameStep Dispatch(Connection* c) {
    const std::string_view body(c->in + c->scanner.head_bytes(), c->head.content_length);
    const bool close =
        c->head.wants_close || HandlerOf(c).Stopping() || impl.stopping || ++c->served >= o.max_requests_per_connection;
    Handled handled = HandlerOf(c).Handle(HttpRequest{c->head, body, BodyPadding(c), c->addresses});
    if (handled.later != nullptr) {
      StartJob(c, close, std::move(handled.later));
      return FrameStep::kStopped;
    }
    Write(c, handled.answer, close);
    FinishRequest(c, close);
    return FrameStep::kAnswered;
  }

  void StartJob(Connection* c, bool close, std::unique_ptr<Deferred> later) {
    c->out.clear();
    c->phase = Connection::Phase::kJob;
    c->job_close = close;
    Want(c, 0);
    ++jobs;
    // The job reads the request's bytes; while the connection is in kJob
    // this loop changes none of them.
    std::shared_ptr<Deferred> job(std::move(later));
    impl.pool.Submit([this, c, job] { PostDone(JobDone{c, job->Run()}); });
  }

  void TakeDone() {
    std::vector<JobDone> batch;
    {
      std::lock_guard<std::mutex> lock(done_mutex);
      batch.swap(done);
    }
    for (JobDone& d : batch) {
      --jobs;
      Connection* c = d.connection;
      if (!c->registered || c->cut) {
        Close(c);
        continue;
      }
      c->phase = Connection::Phase::kRead;
      // A shutdown that began while the worker had it closes this answer too.
      const bool close = c->job_close || HandlerOf(c).Stopping() || impl.stopping;
      Write(c, d.answer, close);
      FinishRequest(c, close);
      Advance(c);
    }
  }

  // The answer in out leaves next; the request's bytes make way for the next one's.
  void FinishRequest(Connection* c, bool close) {
    const std::size_t used = c->scanner.head_bytes() + c->head.content_length;
    const std::size_t rest = c->in_size - used;
    if (rest > 0) std::memmove(c->in, c->in + used, rest);
    c->in_size = rest;
    c->scanner.Reset();
    c->head_parsed = false;
    c->continue_sent = false;
    if (rest == 0) FreeInput(c);
    c->used = true;
    c->close_after_write = close;
    c->answer_in_out = true;
    c->out_sent = 0;
    c->phase = Connection::Phase::kWrite;
  }

  void ConsumeAll(Connection* c) {
    c->in_size = 0;
    c->scanner.Reset();
    c->head_parsed = false;
    FreeInput(c);
  }

  void RefuseAndClose(Connection* c, const Refusal& refusal) {
    Write(c, AnswerOf(refusal), true);
    ConsumeAll(c);
    c->close_after_write = true;
    c->answer_in_out = true;
    c->phase = Connection::Phase::kWrite;
  }

  // ---- buffers and transport ----

  void FreeInput(Connection* c) {
    if (c->in == nullptr) return;
    std::free(c->in);
    impl.buffered.fetch_sub(c->in_capacity);
    c->in = nullptr;
    c->in_capacity = 0;
  }

  // Room for at least one more read, within the request's bounds and the budget.
  bool Reserve(Connection* c) {
    if (c->in_capacity - c->in_size >= 1) return true;
    std::size_t bound = o.limits.max_head_bytes + kReadChunk;
    if (c->head_parsed) bound = std::max(bound, c->scanner.head_bytes() + c->head.content_length);
    const std::size_t want = std::min(bound, std::max<std::size_t>(c->in_capacity * 2, kFirstBuffer));
    if (want <= c->in_size) return false;
    const std::size_t grow = want - c->in_capacity;
    if (impl.buffered.fetch_add(grow) + grow > o.buffer_budget) {
      impl.buffered.fetch_sub(grow);
      return false;
    }
    const HeadPlacement placement = PlacementOf(c->head, c->in);
    char* bigger = static_cast<char*>(std::realloc(c->in, want));
    if (bigger == nullptr) {
      impl.buffered.fetch_sub(grow);
      return false;
    }
    c->in = bigger;
    // The parsed head's views point into the buffer: they move with it.
    if (c->head_parsed) PlaceAt(&c->head, placement, c->in);
    c->in_capacity = want;
    return true;
  }

  Io Fill(Connection* c) {
    if (!Reserve(c)) {
      MarkBusy(c);
      RefuseAndClose(c, Refusal{503, "the server holds too many request bytes at once; retry"});
      return Io::kDone;
    }
    char* at = c->in + c->in_size;
    const std::size_t room = c->in_capacity - c->in_size;
    if (c->ssl != nullptr) {
      ERR_clear_error();
      const int r = SSL_read(c->ssl, at, static_cast<int>(std::min<std::size_t>(room, 1 << 30)));
      if (r > 0) {
        c->in_size += static_cast<std::size_t>(r);
        return Io::kDone;
      }
      switch (SSL_get_error(c->ssl, r)) {
        case SSL_ERROR_WANT_READ: return Io::kWantRead;
        case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
        case SSL_ERROR_ZERO_RETURN: return Io::kEof;
        default: return Io::kError;
      }
    }
    for (;;) {
      const ssize_t r = ::recv(c->fd, at, room, 0);
      if (r > 0) {
        c->in_size += static_cast<std::size_t>(r);
        return Io::kDone;
      }
      if (r == 0) return Io::kEof;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantRead : Io::kError;
    }
  }

  Io Flush(Connection* c) {
    while (c->out_sent < c->out.size()) {
      const char* at = c->out.data() + c->out_sent;
      const std::size_t left = c->out.size() - c->out_sent;
      if (c->ssl != nullptr) {
        ERR_clear_error();
        const int r = SSL_write(c->ssl, at, static_cast<int>(std::min<std::size_t>(left, 1 << 30)));
        if (r > 0) {
          c->out_sent += static_cast<std::size_t>(r);
          continue;
        }
        switch (SSL_get_error(c->ssl, r)) {
          case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
          case SSL_ERROR_WANT_READ: return Io::kWantRead;
          default: return Io::kError;
        }
      }
      const ssize_t r = ::send(c->fd, at, left, MSG_NOSIGNAL);
      if (r > 0) {
        c->out_sent += static_cast<std::size_t>(r);
      } else if (r < 0 && errno == EINTR) {
        continue;
      } else {
        return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kWantWrite : Io::kError;
      }
    }
    c->out.clear();
    c->out_sent = 0;
    // A large answer's buffer is not kept for the next small one.
    if (c->out.capacity() > 64 * 1024) std::string().swap(c->out);
    return Io::kDone;
  }

  // ---- closing ----

  // close_notify and FIN now; what the peer still sends is read and dropped
  // until it closes or `linger` passes, so a reset never destroys the answer.
  void StartLinger(Connection* c) {
    if (c->ssl != nullptr && SSL_is_init_finished(c->ssl)) {
      ERR_clear_error();
      SSL_shutdown(c->ssl);
    }
    ::shutdown(c->fd, SHUT_WR);
    ConsumeAll(c);
    c->busy = false;
    c->phase = Connection::Phase::kLinger;
    c->linger_since = now;
    ArmTimers();
    Want(c, EPOLLIN);
    DrainLinger(c);
  }

  void DrainLinger(Connection* c) {
    static thread_local char sink[16 * 1024];
    for (int i = 0; i < 16; ++i) {
      const ssize_t r = ::recv(c->fd, sink, sizeof sink, 0);
      if (r > 0) continue;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      return Close(c);
    }
  }

  void Close(Connection* c) {
    Deregister(c);
    SSL_free(c->ssl);
    ::close(c->fd);
    FreeInput(c);
    if (c->pending) pending.erase(std::find(pending.begin(), pending.end(), c));
    if (current_batch_ != nullptr)
      std::replace(current_batch_->begin(), current_batch_->end(), c, static_cast<Connection*>(nullptr));
    conns.back()->index = c->index;
    conns[c->index] = conns.back();
    conns.pop_back();
    impl.connections.fetch_sub(1);
    delete c;
  }

  void CloseAllButJobs() {
    for (std::size_t i = conns.size(); i-- > 0;) {
      if (i < conns.size() && conns[i]->phase != Connection::Phase::kJob) Close(conns[i]);
    }
  }

  // Deadlines, idle connections, and listeners paused for want of descriptors.
  void Scan() {
    if (listeners_paused && now >= resume_listeners_at && impl.accepting) {
      listeners_paused = false;
      // Watching a listener again fails only without kernel memory; it then
      // stays unwatched, and the other listeners serve on.
      static_cast<void>(Listen());
    }
    const bool closing_idle = impl.closing_idle.load();
    timers_armed = listeners_paused || (closing_idle && !conns.empty());
    for (std::size_t i = conns.size(); i-- > 0;) {
      if (i >= conns.size()) continue;
      Connection* c = conns[i];
      if (c->busy || c->phase == Connection::Phase::kLinger || c->phase == Connection::Phase::kJob) {
        timers_armed = true;
      }
      switch (c->phase) {
        case Connection::Phase::kLinger:
          if (now - c->linger_since >= o.linger) Close(c);
          break;
        case Connection::Phase::kJob:
          if (!c->cut && now - c->busy_since >= o.blocking_timeout) {
            // The worker still reads the connection's buffer: only end the socket.
            c->cut = true;
            impl.cut.fetch_add(1, std::memory_order_relaxed);
            ::shutdown(c->fd, SHUT_RDWR);
          }
          break;
        default:
          if (c->busy) {
            if (now - c->busy_since >= o.request_timeout) {
              impl.cut.fetch_add(1, std::memory_order_relaxed);
              Close(c);
            }
          } else if (now - c->idle_since >= o.idle_timeout) {
            StartLinger(c);
          } else if (closing_idle && (c->used || now - c->accepted_at >= kFreshConnectionGrace) && NothingPending(c)) {
            StartLinger(c);
          }
      }
    }
    next_scan = now + (timers_armed ? kBusyTick : kIdleTick);
  }
};

ConnectionLoop::ConnectionLoop(Options options) {
  options.event_loops = std::max<std::size_t>(options.event_loops, 1);
  options.max_connections = std::max<std::size_t>(options.max_connections, 1);
  options.max_requests_per_connection = std::max<std::size_t>(options.max_requests_per_connection, 1);
  impl_ = std::make_unique<Impl>(options);
}

ConnectionLoop::~ConnectionLoop() { Stop(); }

void ConnectionLoop::AddListener(int fd, SSL_CTX* ctx, HttpHandler& handler) {
  impl_->listeners.push_back(std::make_unique<Listener>(fd, ctx, handler));
}

Status ConnectionLoop::Start() {
  Impl& m = *impl_;
  for (auto& l : m.listeners) {
    const int flags = ::fcntl(l->fd, F_GETFL, 0);
    ::fcntl(l->fd, F_SETFL, flags | O_NONBLOCK);
  }
  for (std::size_t i = 0; i < m.options.event_loops; ++i) {
    auto loop = std::make_unique<EventLoop>(m);
    if (Status opened = loop->Open(); !opened.ok()) {
      if (loop->epoll_fd >= 0) ::close(loop->epoll_fd);
      if (loop->wake_fd >= 0) ::close(loop->wake_fd);
      Stop();
      return opened;
    }
    m.loops.push_back(std::move(loop));
  }
  m.listeners_open = m.loops.size();
  for (auto& loop : m.loops) {
    EventLoop* l = loop.get();
    l->thread = std::thread([l] { l->Run(); });
  }
  return Status::Ok();
}

void ConnectionLoop::StopAccepting() {
  // Each loop accepts what is queued, then stops watching the listeners.
  impl_->accepting.store(false);
  for (auto& l : impl_->loops) l->Wake();
}

void ConnectionLoop::CloseIdle() {
  impl_->closing_idle.store(true);
  for (auto& l : impl_->loops) l->Wake();
}

void ConnectionLoop::Stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  m.accepting.store(false);
  m.stopping.store(true);
  for (auto& l : m.loops) l->Wake();
  for (auto& l : m.loops) {
    if (l->thread.joinable()) l->thread.join();
  }
  // Every loop waited for its jobs before it left: the workers are idle.
  m.pool.Stop();
  for (auto& l : m.loops) {
    if (l->epoll_fd >= 0) ::close(l->epoll_fd);
    if (l->wake_fd >= 0) ::close(l->wake_fd);
  }
  for (auto& l : m.listeners) ::close(l->fd);
  m.listeners.clear();
}

std::size_t ConnectionLoop::connections() const { return impl_->connections.load(); }
std::size_t ConnectionLoop::connections_cut() const { return impl_->cut.load(); }
std::size_t ConnectionLoop::connections_shed() const { return impl_->shed.load(); }
std::size_t ConnectionLoop::connections_refused() const { return impl_->refused.load(); }
std::size_t ConnectionLoop::busy_polls() const { return impl_->busy_polls.load(); }

}  // namespace ray_webhook
