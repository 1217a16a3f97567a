#include "body_lines.h"

#include <algorithm>
#include <charconv>

namespace ray_webhook {
namespace {

// A chunk-size line is a few hex digits and perhaps an extension; more is not one.
constexpr std::size_t kMaxFramingLine = 1024;

}  // namespace

BodyLines::BodyLines(const AnswerHead& head, std::size_t max_line_bytes)
    : chunked_(head.chunked),
      counted_(!head.chunked && head.content_length.has_value()),
      left_(counted_ ? *head.content_length : 0),
      max_line_bytes_(max_line_bytes) {}

BodyLines::State BodyLines::Fail(std::string why) {
  failed_ = true;
  error_ = std::move(why);
  return State::kFailed;
}

BodyLines::State BodyLines::AddData(std::string_view data, const LineSink& on_line) {
  while (!data.empty()) {
    const std::size_t eol = data.find('\n');
    const std::string_view piece = data.substr(0, eol);
    if (line_.size() + piece.size() > max_line_bytes_) {
      line_too_long_ = true;
      return Fail("a line of the answer exceeds " + std::to_string(max_line_bytes_) + " bytes");
    }
    line_.append(piece);
    if (eol == std::string_view::npos) return State::kMore;
    data.remove_prefix(eol + 1);
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (!line_.empty()) {
      if (Status s = on_line(line_); !s.ok()) return Fail(s.message());
    }
    line_.clear();
  }
  return State::kMore;
}

bool BodyLines::TakeFramingLine(std::string_view* bytes) {
  const std::size_t eol = bytes->find('\n');
  const std::size_t take = eol == std::string_view::npos ? bytes->size() : eol + 1;
  framing_.append(bytes->substr(0, take));
  bytes->remove_prefix(take);
  return eol != std::string_view::npos;
}

BodyLines::State BodyLines::Feed(std::string_view bytes, const LineSink& on_line) {
  if (failed_) return State::kFailed;
  if (!chunked_ && !counted_) return AddData(bytes, on_line);
  if (counted_) {
    const std::size_t take = std::min(left_, bytes.size());
    left_ -= take;
    if (AddData(bytes.substr(0, take), on_line) == State::kFailed) return State::kFailed;
    if (left_ > 0) return State::kMore;
    return Finish(on_line);
  }
  while (!bytes.empty() && chunk_ != Chunk::kDone) {
    switch (chunk_) {
      case Chunk::kSizeLine: {
        const bool whole = TakeFramingLine(&bytes);
        if (framing_.size() > kMaxFramingLine) return Fail("a chunk size line is too long");
        if (!whole) return State::kMore;
        std::string_view size_text(framing_);
        size_text = size_text.substr(0, std::min(size_text.find(';'), size_text.find_first_of("\r\n")));
        std::size_t size = 0;
        const auto [end, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
        if (size_text.empty() || ec != std::errc() || end != size_text.data() + size_text.size()) {
          return Fail("a chunk size is not a hexadecimal number");
        }
        framing_.clear();
        left_ = size;
        chunk_ = size == 0 ? Chunk::kTrailer : Chunk::kData;
        break;
      }
      case Chunk::kData: {
        const std::size_t take = std::min(left_, bytes.size());
        if (AddData(bytes.substr(0, take), on_line) == State::kFailed) return State::kFailed;
        bytes.remove_prefix(take);
        left_ -= take;
        if (left_ == 0) chunk_ = Chunk::kDataEnd;
        break;
      }
      case Chunk::kDataEnd:
      case Chunk::kTrailer: {
        const bool whole = TakeFramingLine(&bytes);
        if (framing_.size() > kMaxFramingLine) return Fail("a chunk's end or trailer is too long");
        const bool ending = std::string_view("\r\n").starts_with(framing_) || framing_ == "\n";
        if (chunk_ == Chunk::kDataEnd && !ending) return Fail("a chunk does not end with CRLF");
        if (!whole) return State::kMore;
        const bool blank = framing_ == "\r\n" || framing_ == "\n";
        chunk_ = chunk_ == Chunk::kDataEnd ? Chunk::kSizeLine : blank ? Chunk::kDone : Chunk::kTrailer;
        framing_.clear();
        break;
      }
      case Chunk::kDone: break;
    }
  }
  if (chunk_ != Chunk::kDone) return State::kMore;
  return Finish(on_line);
}

BodyLines::State BodyLines::Finish(const LineSink& on_line) {
  if (failed_) return State::kFailed;
  if ((chunked_ && chunk_ != Chunk::kDone) || (counted_ && left_ > 0)) {
    return Fail("the connection closed before the answer's end");
  }
  if (!line_.empty()) {
    if (line_.back() == '\r') line_.pop_back();
    const std::string last = std::move(line_);
    line_.clear();
    if (!last.empty()) {
      if (Status s = on_line(last); !s.ok()) return Fail(s.message());
    }
  }
  return State::kEnded;
}

}  // namespace ray_webhook
