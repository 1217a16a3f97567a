// Session: what one connection's bytes mean, seen from the event loop that
// moves them; the protocol (HTTP/1.1) implements it, the loop never parses.
//
// Contract: the loop reads into ReadRoom(), reports it with Received(), and
// calls Advance(), which frames what is buffered and says what to do next:
// read more, send output() (an answer, or an interim response that keeps
// the request going), send it and close, or wait while work the session
// gave to SessionHost::RunBlocking runs on a worker; the loop then calls
// Resume() on its own thread. A session is used by its loop's thread alone,
// apart from the work it hands out, which must touch only what the session
// leaves alone until Resume. InRequest() says a request has begun and is not
// answered: its deadline runs. HasInput() says bytes wait to be framed.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ray_webhook/net/peer_addresses.h"

namespace ray_webhook {

class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual void RunBlocking(std::function<void()> work) = 0;
  // True once the loop is stopping: every answer should close its connection.
  virtual bool Stopping() const = 0;
};

class Session {
 public:
  enum class Next { kRead, kWriteAnswer, kWriteInterim, kClose, kWait };
  virtual ~Session() = default;

  virtual Next Advance() = 0;
  // Where the next read goes; empty when no more bytes may be held.
  virtual std::span<char> ReadRoom() = 0;
  virtual void Received(std::size_t n) = 0;
  // ReadRoom was empty: the refusal to send before closing.
  virtual Next OutOfRoom() = 0;
  virtual Next Resume() = 0;
  virtual std::string& output() = 0;

  virtual bool InRequest() const = 0;
  virtual bool HasInput() const = 0;
  // Answered a request already.
  virtual bool Used() const = 0;
  // The connection is closing: what was received is dropped.
  virtual void DropInput() = 0;
};

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  virtual std::unique_ptr<Session> Open(SessionHost& host, const PeerAddresses& peer) = 0;
};

}  // namespace ray_webhook
