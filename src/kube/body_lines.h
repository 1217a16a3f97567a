// BodyLines: the body of a streamed HTTP answer cut into newline-delimited
// lines as its bytes arrive, for a watch whose answer never ends on its own.
//
// Contract: Feed() takes the bytes after the answer's head in pieces of any
// size. It undoes chunked transfer coding (chunk extensions and trailers are
// skipped) or counts Content-Length, as the head said, and hands each
// complete line, without its "\n" (nor a "\r" before it), to on_line as soon
// as its newline is in, in order; empty lines are skipped. A line is never
// held beyond max_line_bytes: one longer fails the body as soon as it grows
// past the bound, so a peer cannot make it buffer more. on_line's error stops
// the body with that error. Finish() is for the close of the connection: a
// body that needs no framing hands on its last unterminated line and ends;
// a chunked or counted one that is not complete fails. Internal to the kube
// layer. Never throws.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "https_connection.h"
#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/https_stream.h"

namespace ray_webhook {

using LineSink = StreamLineSink;

class BodyLines {
 public:
  BodyLines(const AnswerHead& head, std::size_t max_line_bytes);

  enum class State { kMore, kEnded, kFailed };
  State Feed(std::string_view bytes, const LineSink& on_line);
  State Finish(const LineSink& on_line);

  // Why the body failed: bad framing, a line over the bound, or on_line's error.
  const std::string& error() const { return error_; }
  bool line_too_long() const { return line_too_long_; }

 private:
  enum class Chunk { kSizeLine, kData, kDataEnd, kTrailer, kDone };
  State AddData(std::string_view data, const LineSink& on_line);
  State Fail(std::string why);
  // Collects one framing line (a chunk size, a chunk's CRLF, a trailer) into
  // framing_; true once its "\n" is in.
  bool TakeFramingLine(std::string_view* bytes);

  const bool chunked_;
  const bool counted_;
  std::size_t left_ = 0;  // of the counted body, or of the current chunk
  const std::size_t max_line_bytes_;
  Chunk chunk_ = Chunk::kSizeLine;
  std::string framing_;
  std::string line_;
  std::string error_;
  bool line_too_long_ = false;
  bool failed_ = false;
};

}  // namespace ray_webhook
