// ASCII case folding for the names and values Kubernetes and KubeRay compare
// without regard to case (annotation values, flag values, enum names).
//
// Contract: only 'A'-'Z' and 'a'-'z' change; every other byte, UTF-8
// included, is copied as it is, whatever the C locale.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

inline std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

}  // namespace ray_webhook
