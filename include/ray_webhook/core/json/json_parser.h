// JsonParser: opens one JSON body for the decoders to walk, as a root object.
//
// Contract: Open() reads the body in place when the caller can vouch for
// simdjson's padding after it (readable, not written), and otherwise from a
// copy in a buffer the parser keeps and reuses, so that parsing allocates only
// when a body is larger than any before it. It tells an empty body (nothing
// but whitespace), a root that is valid JSON but no object (a number, a
// string, true, false, null, an array) and invalid JSON apart. The document
// and object it opens are valid until the next Open(). CheckEnd(), once the
// walk is done, tells content after the root (invalid, as for Go's decoder).
// One parser serves one thread. Never throws.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ray_webhook/core/json/json_reader.h"

namespace ray_webhook {

class JsonParser {
 public:
  // Room for bodies of up to `capacity` bytes up front (pages are touched only
  // as used); larger bodies grow the buffers on demand.
  explicit JsonParser(std::size_t capacity);

  enum class Root { kObject, kEmpty, kNotObject, kInvalidJson };

  // kObject with *doc and *root ready to walk, or what the body is instead;
  // kInvalidJson sets *json_error.
  Root Open(std::string_view body, std::size_t readable_padding, od::document* doc, od::object* root,
            simdjson::error_code* json_error);

  // SUCCESS when the document opened last, walked to its end, ends where its
  // body does; TRAILING_CONTENT, or the error that stopped the check, if not.
  simdjson::error_code CheckEnd(od::document& doc) const;

  // The largest body the buffers hold without growing.
  std::size_t capacity() const;

  // The body opened last as the parser reads it: in place, or the copy.
  std::string_view body() const { return {begin_, static_cast<std::size_t>(end_ - begin_)}; }

  // How many bytes after `text`, a part of the body opened last, may be read:
  // the rest of the body and its padding (or the copy's), so that a part can
  // be parsed again in place.
  std::size_t ReadableAfter(std::string_view text) const;

 private:
  od::parser parser_;
  // Bodies without readable padding are copied here.
  std::string scratch_;
  const char* begin_ = nullptr;  // of the body opened last
  const char* end_ = nullptr;
  const char* readable_ = nullptr;  // its end, padding included
};

}  // namespace ray_webhook
