// EventLoop, serving a connection: its phases from the handshake to the
// close (handshake, read, a job on a worker, write, linger), the bytes
// between its transport and its session, and a few requests per turn.
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <span>
#include <string>
#include <vector>

#include "event_loop.h"

namespace ray_webhook {

void EventLoop::OnEvent(Connection* c, std::uint32_t events) {
  if (c->phase == Connection::Phase::kJob) {
    // A hung-up socket stays ready; it is closed when the worker is done.
    if ((events & (EPOLLHUP | EPOLLERR)) != 0) Deregister(c);
    return;
  }
  Advance(c);
}

void EventLoop::Want(Connection* c, std::uint32_t events) {
  if (!c->registered || c->interest == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = static_cast<Pollable*>(c);
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
  c->interest = events;
}

void EventLoop::Deregister(Connection* c) {
  if (!c->registered) return;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  c->registered = false;
}

void EventLoop::MarkBusy(Connection* c) {
  if (c->busy) return;
  c->busy = true;
  c->busy_since = now;
  ArmTimers();
}

void EventLoop::AddPending(Connection* c) {
  if (c->pending) return;
  c->pending = true;
  pending.push_back(c);
}

void EventLoop::RunPending() {
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

void EventLoop::Advance(Connection* c) {
  int requests = 0;
  for (;;) {
    switch (c->phase) {
      case Connection::Phase::kHandshake:
        MarkBusy(c);
        switch (c->transport->Handshake()) {
          case Io::kDone:
            c->phase = Connection::Phase::kRead;
            // Waiting for the first request counts as idle, not as the handshake.
            c->busy = false;
            c->idle_since = now;
            continue;
          case Io::kWantRead: return Want(c, EPOLLIN);
          case Io::kWantWrite: return Want(c, EPOLLOUT);
          default: return Close(c);
        }
      case Connection::Phase::kRead: {
        if (requests >= kRequestsPerTurn) {
          // The others first; pending runs it again after this round.
          AddPending(c);
          return;
        }
        const Session::Next next = c->session->Advance();
        if (c->session->InRequest()) MarkBusy(c);
        if (next != Session::Next::kRead) {
          if (next == Session::Next::kWriteAnswer || next == Session::Next::kClose) ++requests;
          Act(c, next);
          continue;
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

void EventLoop::Act(Connection* c, Session::Next next) {
  switch (next) {
    case Session::Next::kWait: c->phase = Connection::Phase::kJob; return;
    case Session::Next::kClose:
      MarkBusy(c);
      c->close_after_write = true;
      [[fallthrough]];
    case Session::Next::kWriteAnswer: c->answer_in_out = true; break;
    case Session::Next::kWriteInterim:
    case Session::Next::kRead: break;
  }
  c->out_sent = 0;
  c->phase = Connection::Phase::kWrite;
}

void EventLoop::StartJob(Connection* c, std::function<void()> work) {
  Want(c, 0);
  ++jobs;
  // The work reads the request's bytes; while the connection is in kJob
  // this loop changes none of them.
  impl.pool.Submit([this, c, work = std::move(work)] {
    work();
    PostDone(JobDone{c});
  });
}

void EventLoop::TakeDone() {
  std::vector<JobDone> batch;
  {
    MutexLock lock(&done_mutex);
    batch.swap(done);
  }
  for (JobDone& d : batch) {
    --jobs;
    Connection* c = d.connection;
    if (!c->registered || c->cut) {
      Close(c);
      continue;
    }
    Act(c, c->session->Resume());
    Advance(c);
  }
}

Io EventLoop::Fill(Connection* c) {
  const std::span<char> room = c->session->ReadRoom();
  if (room.empty()) {
    Act(c, c->session->OutOfRoom());
    return Io::kDone;
  }
  std::size_t got = 0;
  const Io r = c->transport->Read(room.data(), room.size(), &got);
  if (r == Io::kDone) c->session->Received(got);
  return r;
}

Io EventLoop::Flush(Connection* c) {
  std::string& out = c->session->output();
  while (c->out_sent < out.size()) {
    std::size_t sent = 0;
    const Io r = c->transport->Write(out.data() + c->out_sent, out.size() - c->out_sent, &sent);
    if (r != Io::kDone) return r;
    c->out_sent += sent;
  }
  out.clear();
  c->out_sent = 0;
  // A large answer's buffer is not kept for the next small one.
  if (out.capacity() > 64 * 1024) std::string().swap(out);
  return Io::kDone;
}

void EventLoop::StartLinger(Connection* c) {
  c->transport->Shutdown();
  c->session->DropInput();
  c->busy = false;
  c->phase = Connection::Phase::kLinger;
  c->linger_since = now;
  ArmTimers();
  Want(c, EPOLLIN);
  DrainLinger(c);
}

void EventLoop::DrainLinger(Connection* c) {
  static thread_local char sink[16 * 1024];
  for (int i = 0; i < 16; ++i) {
    const ssize_t r = ::recv(c->fd, sink, sizeof sink, 0);
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    return Close(c);
  }
}

void EventLoop::Close(Connection* c) {
  Deregister(c);
  if (c->pending) pending.erase(std::find(pending.begin(), pending.end(), c));
  if (current_batch_ != nullptr)
    std::replace(current_batch_->begin(), current_batch_->end(), c, static_cast<Connection*>(nullptr));
  conns.back()->index = c->index;
  conns[c->index] = conns.back();
  conns.pop_back();
  impl.connections.fetch_sub(1);
  delete c;
}

}  // namespace ray_webhook
