#include "ray_webhook/server/review_path.h"

#include <spdlog/spdlog.h>

#include <string>

#include "log_value.h"
#include "ray_webhook/http/refusal.h"
#include "ray_webhook/logging/review_log_line.h"
#include "ray_webhook/server/lookup_deadline.h"
#include "ray_webhook/server/route.h"

namespace ray_webhook {

HttpAnswer HandlerFailed(std::string_view path, std::string_view what) {
  spdlog::error("handler failed path={} error={}", path, LogValue{what});
  return AnswerOf(Refusal{500, "internal error while handling the request"});
}

class ReviewPath::LookupStep final : public Deferred {
 public:
  LookupStep(ReviewPath& path, ReviewDecoderPool::Lease decoder, PreparedReview review,
             std::chrono::milliseconds deadline, std::string_view remote, Endpoint endpoint, Clock::time_point start)
      : path_(path),
        decoder_(std::move(decoder)),
        review_(std::move(review)),
        deadline_(deadline),
        remote_(remote),
        endpoint_(endpoint),
        start_(start) {}

  HttpAnswer Run() override {
    try {
      review_.Finish(path_.LookUpHeads(review_.heads_wanted(), deadline_));
      return path_.Finish(review_.outcome(), endpoint_, remote_, start_);
    } catch (const std::exception& e) {
      return HandlerFailed(EndpointPath(endpoint_), e.what());
    }
  }

 private:
  ReviewPath& path_;
  ReviewDecoderPool::Lease decoder_;  // holds the decoded review until it is finished
  PreparedReview review_;
  const std::chrono::milliseconds deadline_;
  const std::string_view remote_;  // the connection's, which outlives the step
  const Endpoint endpoint_;
  const Clock::time_point start_;
};

Handled ReviewPath::Review(const HttpRequest& request, Endpoint endpoint) {
  ReviewDecoderPool::Lease decoder = decoders_.Acquire();
  metrics_.RequestStarted(EndpointPath(endpoint));
  const auto start = Clock::now();
  PreparedReview review =
      PrepareReview(request.body, endpoint, policy_.Get(), *decoder, kube_ != nullptr, request.readable_padding);
  Handled handled;
  if (review.done()) {
    handled.answer = Finish(review.outcome(), endpoint, request.peer.remote_ip, start);
    return handled;
  }
  // ?timeout= is read only by a review that looks heads up: few do.
  const std::chrono::milliseconds deadline = LookupDeadline(TimeoutParam(request.head.target), kube_timeout_);
  handled.later = std::make_unique<LookupStep>(*this, std::move(decoder), std::move(review), deadline,
                                               request.peer.remote_ip, endpoint, start);
  return handled;
}

HeadPodList ReviewPath::LookUpHeads(const HeadQuery& query, std::chrono::milliseconds deadline) {
  HeadPodList r = kube_->ListHeadPods(query.namespace_name, query.cluster, deadline);
  metrics_.CountHeadLookup(r.ok());
  if (!r.ok()) {
    spdlog::warn("head lookup failed namespace={} cluster={} error={}", LogValue{query.namespace_name},
                 LogValue{query.cluster}, LogValue{r.error()});
  }
  return r;
}

HttpAnswer ReviewPath::Finish(ReviewOutcome& out, Endpoint endpoint, std::string_view remote, Clock::time_point start) {
  const std::string_view path = EndpointPath(endpoint);
  const auto elapsed = Clock::now() - start;
  metrics_.RequestFinished(path, out.http_status, std::chrono::duration<double>(elapsed).count());
  HttpAnswer answer;
  answer.status = out.http_status;
  answer.body = std::move(out.body);
  if (out.http_status != 200) {
    spdlog::warn("review rejected path={} remote={} status={} error={}", path, remote, out.http_status,
                 LogValue{out.error});
    return answer;
  }
  metrics_.CountDecision(out.decision);
  if (!spdlog::should_log(spdlog::level::info)) return answer;  // skip building the line
  thread_local std::string line;
  line.clear();
  AppendReviewLogLine(
      ReviewLogFieldsOf(out, endpoint, std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()), &line);
  // A ready line: spdlog's string_view overload skips fmt altogether.
  spdlog::default_logger_raw()->log(spdlog::level::info, spdlog::string_view_t(line.data(), line.size()));
  return answer;
}

}  // namespace ray_webhook
