// Status and Result<T>: how every fallible call in ray-webhook reports failure.
//
// Contract: a Status is either OK or an error with a one-line message fit to
// show a user or log as it is; a Result<T> holds either a T or an error
// Status, never both. Neither throws, and reading the value of a failed
// Result is a programming error (asserted). The message is the whole report:
// callers add context by wrapping it (Status::Error("loading X: " + s.message())).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace ray_webhook {

class [[nodiscard]] Status {
 public:
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  // Empty for OK.
  const std::string& message() const {
    static const std::string kNone;
    return message_ ? *message_ : kNone;
  }

 private:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)), status_(Status::Ok()) {}         // NOLINT: implicit by design
  Result(Status error) : status_(std::move(error)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const std::string& error() const { return status_.message(); }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace ray_webhook
