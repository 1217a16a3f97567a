#include "ray_webhook/http/refusal.h"

#include "ray_webhook/core/review/admission_response.h"

namespace ray_webhook {

std::string_view StatusReasonOf(int status) {
  switch (status) {
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 411: return "LengthRequired";
    case 413: return "RequestEntityTooLarge";
    case 414: return "RequestURITooLong";
    case 415: return "UnsupportedMediaType";
    case 417: return "ExpectationFailed";
    case 431: return "RequestHeaderFieldsTooLarge";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 505: return "HTTPVersionNotSupported";
    default: return "BadRequest";
  }
}

HttpAnswer AnswerOf(const Refusal& refusal) {
  HttpAnswer answer;
  answer.status = refusal.status;
  answer.body = EncodeErrorStatus(refusal.status, StatusReasonOf(refusal.status), refusal.message);
  answer.allow = refusal.allow;
  if (refusal.status == 503) answer.retry_after_seconds = 1;
  return answer;
}

}  // namespace ray_webhook
