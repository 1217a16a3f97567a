#include "ray_start_address.h"

#include <vector>

namespace ray_webhook {
namespace {

constexpr std::string_view kFlag = "--address";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }
bool IsQuote(char c) { return c == '"' || c == '\''; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// What may follow HOST:PORT in a shell word list.
bool EndsWord(char c) { return IsSpace(c) || IsQuote(c) || c == ';' || c == '&' || c == '|' || c == ')'; }

struct AddressSpan {
  std::size_t host_begin;
  std::size_t host_end;
};

// Calls visit(span) for every well-formed address in the text, in order; a
// visitor rather than a list, as this runs on the command and args of every
// Ray container reviewed.
template <typename Visit>
void ForEachAddress(std::string_view text, Visit&& visit) {
  std::size_t from = 0;
  while (true) {
    const std::size_t flag = text.find(kFlag, from);
    if (flag == std::string_view::npos) break;
    from = flag + kFlag.size();
    if (flag > 0 && !IsSpace(text[flag - 1]) && !IsQuote(text[flag - 1])) continue;
    std::size_t i = from;
    if (i < text.size() && text[i] == '=') {
      ++i;
    } else {
      const std::size_t spaces = i;
      while (i < text.size() && IsSpace(text[i])) ++i;
      if (i == spaces) continue;  // e.g. --address-foo
    }
    if (i < text.size() && IsQuote(text[i])) ++i;
    const std::size_t host_begin = i;
    while (i < text.size() && text[i] != ':' && !EndsWord(text[i])) ++i;
    if (i == host_begin || i >= text.size() || text[i] != ':') continue;
    const std::size_t host_end = i++;
    const std::size_t port_begin = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == port_begin || (i < text.size() && !EndsWord(text[i]))) continue;
    visit(AddressSpan{host_begin, host_end});
    from = i;
  }
}

}  // namespace

bool IsShortServiceName(std::string_view host) {
  if (host.empty() || host.size() > 63 || host == "localhost") return false;
  if (host.front() < 'a' || host.front() > 'z' || host.back() == '-') return false;
  for (char c : host) {
    if (!((c >= 'a' && c <= 'z') || IsDigit(c) || c == '-')) return false;
  }
  return true;
}

std::vector<std::string_view> AddressHosts(std::string_view text) {
  std::vector<std::string_view> hosts;
  if (text.find(kFlag) == std::string_view::npos) return hosts;
  ForEachAddress(text, [&](AddressSpan a) { hosts.push_back(text.substr(a.host_begin, a.host_end - a.host_begin)); });
  return hosts;
}

std::optional<std::string> RewriteRayStartAddress(std::string_view text, std::string_view service,
                                                  std::string_view fqdn) {
  if (text.find(kFlag) == std::string_view::npos) return std::nullopt;
  std::string out;
  std::size_t copied = 0;
  ForEachAddress(text, [&](AddressSpan a) {
    if (text.substr(a.host_begin, a.host_end - a.host_begin) != service) return;
    if (copied == 0) out.reserve(text.size() + fqdn.size());  // one rewritten address: one allocation
    out.append(text.substr(copied, a.host_begin - copied));
    out.append(fqdn);
    copied = a.host_end;
  });
  if (copied == 0) return std::nullopt;
  out.append(text.substr(copied));
  return out;
}

std::optional<std::string> RewriteHostPort(std::string_view value, std::string_view service, std::string_view fqdn) {
  if (value.size() <= service.size() + 1 || value.substr(0, service.size()) != service ||
      value[service.size()] != ':') {
    return std::nullopt;
  }
  std::string_view port = value.substr(service.size() + 1);
  for (char c : port) {
    if (!IsDigit(c)) return std::nullopt;
  }
  std::string out(fqdn);
  out += ':';
  out += port;
  return out;
}

}  // namespace ray_webhook
