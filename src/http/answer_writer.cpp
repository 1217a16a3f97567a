#include "ray_webhook/http/answer_writer.h"

#include <charconv>

namespace ray_webhook {
namespace {

void AppendNumber(std::size_t n, std::string* out) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, n);
  out->append(digits, r.ptr);
}

}  // namespace

std::string_view ReasonPhraseOf(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

void WriteAnswer(const HttpAnswer& answer, const AnswerFraming& framing, std::string* out) {
  out->append("HTTP/1.1 ");
  AppendNumber(static_cast<std::size_t>(answer.status), out);
  out->push_back(' ');
  out->append(ReasonPhraseOf(answer.status));
  out->append("\r\n");
  if (!answer.allow.empty()) out->append("Allow: ").append(answer.allow).append("\r\n");
  if (framing.close) out->append("Connection: close\r\n");
  out->append("Content-Length: ");
  AppendNumber(answer.body.size(), out);
  out->append("\r\n");
  if (!answer.body.empty()) out->append("Content-Type: ").append(answer.content_type).append("\r\n");
  if (!framing.close) {
    out->append("Keep-Alive: timeout=");
    AppendNumber(static_cast<std::size_t>(framing.keep_alive_seconds), out);
    out->append(", max=");
    AppendNumber(framing.keep_alive_max, out);
    out->append("\r\n");
  }
  if (answer.retry_after_seconds > 0) {
    out->append("Retry-After: ");
    AppendNumber(static_cast<std::size_t>(answer.retry_after_seconds), out);
    out->append("\r\n");
  }
  out->append("\r\n");
  if (!framing.head_only) out->append(answer.body);
}

void WriteContinue(std::string* out) { out->append("HTTP/1.1 100 Continue\r\n\r\n"); }

}  // namespace ray_webhook
