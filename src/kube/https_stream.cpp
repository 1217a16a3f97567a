#include "ray_webhook/kube/https_stream.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "body_lines.h"
#include "https_connection.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
using How = StreamEnd::How;

// An answer head is a status line and a few headers; more is not an API server's.
constexpr std::size_t kMaxHeadBytes = 64 * 1024;

StreamEnd End(How how, std::string reason) {
  StreamEnd end;
  end.how = how;
  end.reason = std::move(reason);
  return end;
}

std::string Seconds(std::chrono::milliseconds d) { return std::to_string(d.count() / 1000.0).substr(0, 4) + " s"; }

}  // namespace

StreamEnd HttpsStreamLines(const HttpsTarget& target, std::string_view path, const HttpHeaders& headers,
                           const std::string& ca_file, const StreamLimits& limits, const StreamLineSink& on_line,
                           const std::function<bool()>& stop) {
  const Clock::time_point head_deadline = std::min(limits.deadline, Clock::now() + limits.connect_timeout);
  Result<std::unique_ptr<HttpsConnection>> connection =
      HttpsConnection::Open(target, "GET", path, headers, {}, ca_file, head_deadline, stop);
  if (!connection.ok()) {
    if (stop && stop()) return End(How::kStopped, "stopped");
    return End(How::kBroken, connection.error());
  }

  std::string head;
  std::optional<BodyLines> body;
  int status = 0;
  std::string error_body;
  bool refused = false;
  // The sink of a 200 answer's lines is the caller's; any other answer's body is kept, bounded, to be returned.
  const StreamLineSink lines = [&](std::string_view line) -> Status {
    if (status != 200) {
      if (error_body.size() >= limits.max_error_body_bytes) return Status::Error("the error body is long enough");
      error_body.append(line.substr(0, limits.max_error_body_bytes - error_body.size())).append("\n");
      return Status::Ok();
    }
    Status s = on_line(line);
    refused = !s.ok();
    return s;
  };
  Clock::time_point last_byte = Clock::now();
  char buf[16384];
  for (;;) {
    if (stop && stop()) return End(How::kStopped, "stopped");
    const Clock::time_point now = Clock::now();
    if (now >= limits.deadline) return End(How::kDeadline, "the stream passed its deadline");
    if (!body && now >= head_deadline) return End(How::kBroken, "timed out waiting for the answer's head");
    if (now - last_byte >= limits.idle_timeout) {
      return End(How::kIdle, "no byte came for " + Seconds(limits.idle_timeout));
    }
    const Clock::time_point until = std::min({now + limits.stop_check, limits.deadline, last_byte + limits.idle_timeout,
                                              body ? Clock::time_point::max() : head_deadline});
    const int n = (*connection)->Read(buf, sizeof buf, until);
    if (n == HttpsConnection::kTimedOut) continue;
    if (n > 0) last_byte = Clock::now();
    std::string_view fresh(buf, static_cast<std::size_t>(std::max(n, 0)));
    std::string after_head;
    if (!body) {
      head.append(fresh);
      const std::size_t head_end = head.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        if (n <= 0)
          return End(How::kBroken, head.empty() ? "the connection closed without an answer"
                                                : "the connection closed within the answer's head");
        if (head.size() > kMaxHeadBytes) return End(How::kBroken, "the answer's head is too long");
        continue;
      }
      const std::optional<AnswerHead> parsed = ParseAnswerHead(std::string_view(head).substr(0, head_end));
      if (!parsed) return End(How::kBroken, "the answer is not an HTTP answer");
      status = parsed->status;
      body.emplace(*parsed, status == 200 ? limits.max_line_bytes : limits.max_error_body_bytes);
      after_head = head.substr(head_end + 4);
      fresh = after_head;
    }
    BodyLines::State state = fresh.empty() ? BodyLines::State::kMore : body->Feed(fresh, lines);
    if (state == BodyLines::State::kMore && n <= 0) state = body->Finish(lines);
    if (state == BodyLines::State::kMore) continue;
    if (status != 200) {
      StreamEnd end = End(How::kAnswered, "the server answered " + std::to_string(status));
      end.status = status;
      end.body = std::move(error_body);
      return end;
    }
    if (state == BodyLines::State::kEnded) {
      StreamEnd end = End(How::kEnded, "");
      end.status = status;
      return end;
    }
    return End(body->line_too_long() ? How::kLineTooLong : refused ? How::kRefused : How::kBroken, body->error());
  }
}

}  // namespace ray_webhook
