#include "ray_webhook/buffered_request_stream.h"

#include <algorithm>
#include <cstring>

namespace ray_webhook {

ssize_t BufferedRequestStream::read(char* ptr, size_t size) {
  std::string_view& from = head_.empty() ? body_ : head_;
  const std::size_t n = std::min(size, from.size());
  std::memcpy(ptr, from.data(), n);
  from.remove_prefix(n);
  return static_cast<ssize_t>(n);
}

}  // namespace ray_webhook
