#include "flag_reference.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "command_line.h"

namespace ray_webhook {
namespace {

// A table cell: "|" would end it.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// A default that is a value is code; one that is a phrase
// ("$CLUSTER_DOMAIN, else cluster.local") is prose.
std::string DefaultCell(const std::string& shown) {
  if (shown.empty()) return "";
  if (shown.find(' ') != std::string::npos) return Cell(shown);
  return "`" + Cell(shown) + "`";
}

std::string Heading(std::string_view section) {
  std::string h(section);
  if (!h.empty()) h[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(h[0])));
  return h;
}

// The usage's synopsis lines, as --help prints them, without their indent.
std::string Synopsis() {
  const std::string usage = UsageText();
  const std::size_t from = usage.find("Usage:\n");
  if (from == std::string::npos) return "";
  std::string out;
  for (std::size_t at = from + 7, end; at < usage.size() && usage[at] != '\n'; at = end + 1) {
    end = usage.find('\n', at);
    if (end == std::string::npos) end = usage.size();
    std::string_view line(usage.data() + at, end - at);
    line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    out += std::string(line) + "\n";
  }
  return out;
}

}  // namespace

std::string FlagReferenceMarkdown(std::span<const ServeFlag> flags) {
  std::string md = R"(# Command-line flags

<!-- Generated from the flag table, src/cli/flag_table.cpp: edit the table, then run
`build/tests/flag-reference > docs/flags.md`. CTest docs_flags fails while this file differs. -->

```
)" + Synopsis() + R"(```

Flags take `--flag value` or `--flag=value`; durations are written `500ms`, `2s`, `1m` or `50us`. A
bad flag prints one line saying what is wrong and exits 2. `serve` stops on SIGTERM or SIGINT.
`ray-webhook serve --help` prints the same flags with a line each.
)";
  const ServeSettings defaults;
  std::string_view section;
  bool first = true;
  for (const ServeFlag& f : flags) {
    if (first || f.section != section) {
      section = f.section;
      first = false;
      md += "\n## " + Heading(section) + "\n\n| flag | default | meaning |\n|---|---|---|\n";
    }
    md += "| `" + Cell(f.name) + (f.argument.empty() ? "" : " " + Cell(f.argument)) + "` | " +
          DefaultCell(f.shown(defaults)) + " | " + Cell(f.reference) + " |\n";
  }
  md += R"(
## review and audit

`review` reads one AdmissionReview from FILE or stdin, prints the answer AdmissionReview and exits 0,
or exits 1 when the input is not a usable AdmissionReview. It does no network I/O. Its flags
besides `--mutate`, `--validate` or `--admit` (both in one call) are `--cluster-domain DOMAIN` and the flags of KubeRay's spec checks
(`--kuberay-version`, `--kuberay-feature-gates`, `--spec-rule-mode`, `--spec-rule`), read as `serve`
reads them.

`audit` ([audit.md](audit.md)) takes `--output table|json` (`-o`), `--namespace NS` (`-n`, for the
live cluster only), and these flags of `serve`:)";
  std::string_view separator = " ";
  const std::span<const std::string_view> shared = AuditSharedFlags();
  for (std::size_t i = 0; i < shared.size(); ++i) {
    md += std::string(separator) + "`" + std::string(shared[i]) + "`";
    separator = i + 2 == shared.size() ? " and " : ", ";
  }
  md += R"(. There `--kube-api-timeout` bounds each page of a list, and its default is
`30s`; the cost-leak limits judge a dump by the clock of the audit. Without files it reads the live cluster through them, or in-cluster as `serve` does.
)";
  return md;
}

std::string FlagReferenceMarkdown() { return FlagReferenceMarkdown(ServeFlags()); }

}  // namespace ray_webhook
