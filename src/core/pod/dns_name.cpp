#include "ray_webhook/core/pod/dns_name.h"

namespace ray_webhook {

bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '.') {
      if (label == 0 || name[i - 1] == '-') return false;
      label = 0;
    } else if (alnum || (c == '-' && label > 0)) {
      if (++label > 63) return false;
    } else {
      return false;
    }
  }
  return label > 0 && name.back() != '-';
}

}  // namespace ray_webhook
