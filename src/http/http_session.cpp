#include "ray_webhook/http/http_session.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ray_webhook/http/answer_writer.h"

namespace ray_webhook {
namespace {

// A request's buffer starts this small and doubles: a KubeRay Pod's review
// (about 6 KB with its head) fits without a second allocation, and 1,000
// connections stalled inside a request hold 8 MiB, not 16.
constexpr std::size_t kFirstBuffer = 8 * 1024;
// Read beyond the head's limit, so the scanner sees a head that is too long.
constexpr std::size_t kReadChunk = 16 * 1024;

class HttpSession final : public Session {
 public:
  HttpSession(SessionHost& host, const PeerAddresses& peer, HttpHandler& handler, ByteBudget& budget,
              const HttpSessionOptions& options)
      : host_(host), peer_(peer), handler_(handler), budget_(budget), options_(options) {}
  ~HttpSession() override { FreeInput(); }

  Next Advance() override {
    if (!head_parsed_) {
      const std::string_view buffered(in_, in_size_);
      switch (scanner_.Scan(buffered, options_.limits)) {
        case HeadScanner::State::kNeedMore: return Next::kRead;
        case HeadScanner::State::kRefused: return RefuseAndClose(scanner_.refusal());
        case HeadScanner::State::kComplete: break;
      }
      Refusal refusal;
      if (!ParseRequestHead(buffered.substr(0, scanner_.head_bytes()), options_.limits, &head_, &refusal)) {
        return RefuseAndClose(refusal);
      }
      head_parsed_ = true;
      if (head_.content_length > 0) {
        // Answered from the head alone; the unread body is dropped while the connection closes.
        if (const Refusal refused = handler_.CheckHead(head_)) return RefuseAndClose(refused);
      }
    }
    if (in_size_ < scanner_.head_bytes() + head_.content_length) {
      if (!head_.expect_continue || continue_sent_) return Next::kRead;
      continue_sent_ = true;
      out_.clear();
      WriteContinue(&out_);
      return Next::kWriteInterim;
    }
    return Dispatch();
  }

  // Room for at least one more read, within the request's bounds and the budget.
  std::span<char> ReadRoom() override {
    if (in_capacity_ - in_size_ < 1) {
      std::size_t bound = options_.limits.max_head_bytes + kReadChunk;
      if (head_parsed_) bound = std::max(bound, scanner_.head_bytes() + head_.content_length);
      const std::size_t want = std::min(bound, std::max<std::size_t>(in_capacity_ * 2, kFirstBuffer));
      if (want <= in_size_) return {};
      const std::size_t grow = want - in_capacity_;
      if (budget_.used.fetch_add(grow) + grow > budget_.limit) {
        budget_.used.fetch_sub(grow);
        return {};
      }
      const HeadPlacement placement = PlacementOf(head_, in_);
      char* bigger = static_cast<char*>(std::realloc(in_, want));
      if (bigger == nullptr) {
        budget_.used.fetch_sub(grow);
        return {};
      }
      in_ = bigger;
      // The parsed head's views point into the buffer: they move with it.
      if (head_parsed_) PlaceAt(&head_, placement, in_);
      in_capacity_ = want;
    }
    return {in_ + in_size_, in_capacity_ - in_size_};
  }

  void Received(std::size_t n) override { in_size_ += n; }

  Next OutOfRoom() override {
    return RefuseAndClose(Refusal{503, "the server holds too many request bytes at once; retry"});
  }

  Next Resume() override {
    // A shutdown that began while the worker had the request closes this answer too.
    const bool close = job_close_ || Stopping();
    Write(deferred_answer_, close);
    deferred_answer_ = HttpAnswer();
    return FinishRequest(close);
  }

  std::string& output() override { return out_; }
  bool InRequest() const override { return head_parsed_ || in_size_ > 0; }
  bool HasInput() const override { return in_size_ > 0; }
  bool Used() const override { return served_ > 0; }
  void DropInput() override {
    in_size_ = 0;
    scanner_.Reset();
    head_parsed_ = false;
    FreeInput();
  }

 private:
  bool Stopping() const { return handler_.Stopping() || host_.Stopping(); }

  Next Dispatch() {
    const std::string_view body(in_ + scanner_.head_bytes(), head_.content_length);
    const bool close = head_.wants_close || Stopping() || ++served_ >= options_.max_requests;
    // The bytes after the body are readable, so the review can be parsed in place.
    const std::size_t padding = in_capacity_ - scanner_.head_bytes() - head_.content_length;
    Handled handled = handler_.Handle(HttpRequest{head_, body, padding, peer_});
    if (handled.later != nullptr) {
      job_close_ = close;
      std::shared_ptr<Deferred> job(std::move(handled.later));
      host_.RunBlocking([this, job] { deferred_answer_ = job->Run(); });
      return Next::kWait;
    }
    Write(handled.answer, close);
    return FinishRequest(close);
  }

  void Write(const HttpAnswer& answer, bool close) {
    AnswerFraming framing;
    framing.close = close;
    framing.head_only = head_parsed_ && head_.method == "HEAD";
    framing.keep_alive_seconds =
        std::max<long>(1, std::chrono::duration_cast<std::chrono::seconds>(options_.idle_timeout).count());
    framing.keep_alive_max = options_.max_requests;
    out_.clear();
    WriteAnswer(answer, framing, &out_);
  }

  Next RefuseAndClose(const Refusal& refusal) {
    Write(AnswerOf(refusal), true);
    DropInput();
    return Next::kClose;
  }

  // The answer in out leaves next; the request's bytes make way for the next one's.
  Next FinishRequest(bool close) {
    const std::size_t used = scanner_.head_bytes() + head_.content_length;
    const std::size_t rest = in_size_ - used;
    if (rest > 0) std::memmove(in_, in_ + used, rest);
    in_size_ = rest;
    scanner_.Reset();
    head_parsed_ = false;
    continue_sent_ = false;
    if (rest == 0) FreeInput();
    return close ? Next::kClose : Next::kWriteAnswer;
  }

  void FreeInput() {
    if (in_ == nullptr) return;
    std::free(in_);
    budget_.used.fetch_sub(in_capacity_);
    in_ = nullptr;
    in_capacity_ = 0;
  }

  SessionHost& host_;
  const PeerAddresses& peer_;
  HttpHandler& handler_;
  ByteBudget& budget_;
  const HttpSessionOptions& options_;

  // Received, not yet answered: a request being framed, and what follows it.
  char* in_ = nullptr;
  std::size_t in_size_ = 0, in_capacity_ = 0;
  HeadScanner scanner_;
  bool head_parsed_ = false;
  RequestHead head_;
  bool continue_sent_ = false;
  std::size_t served_ = 0;

  std::string out_;
  bool job_close_ = false;
  HttpAnswer deferred_answer_;  // written by the blocking worker, read after Resume
};

}  // namespace

std::unique_ptr<Session> HttpSessions::Open(SessionHost& host, const PeerAddresses& peer) {
  return std::make_unique<HttpSession>(host, peer, handler_, budget_, options_);
}

}  // namespace ray_webhook
