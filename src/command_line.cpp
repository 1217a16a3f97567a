#include "ray_webhook/command_line.h"

#include <charconv>

namespace ray_webhook {
namespace {

bool ParseInt(std::string_view text, int min, int max, int* out) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

// RFC 1123 subdomain, as Kubernetes validates DNS names.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (label == 0 || s[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && label > 0)) return false;
    if (++label > 63) return false;
  }
  return label > 0 && s.back() != '-';
}

bool IsLogLevel(std::string_view s) {
  for (std::string_view l : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    if (s == l) return true;
  }
  return false;
}

// Splits "--flag=value" or takes the next argument as the value.
class FlagReader {
 public:
  FlagReader(const std::vector<std::string>& args, std::size_t start) : args_(args), i_(start) {}
  bool Done() const { return i_ >= args_.size(); }
  std::string_view Next() {
    std::string_view a = args_[i_++];
    inline_value_.reset();
    if (a.starts_with("--")) {
      if (auto eq = a.find('='); eq != std::string_view::npos) {
        inline_value_ = a.substr(eq + 1);
        return a.substr(0, eq);
      }
    }
    return a;
  }
  std::optional<std::string_view> Value() {
    if (inline_value_) return inline_value_;
    if (i_ >= args_.size()) return std::nullopt;
    return std::string_view(args_[i_++]);
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t i_;
  std::optional<std::string_view> inline_value_;
};

ParseResult Fail(std::string message) { return ParseResult{std::nullopt, std::move(message)}; }

ParseResult ParseServe(const std::vector<std::string>& args, const EnvLookup& env) {
  Command cmd;
  cmd.kind = CommandKind::kServe;
  Config& c = cmd.config;
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) c.cluster_domain = *domain;
  std::optional<std::string> flag_domain;

  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string flag(r.Next());
    if (flag == "--help" || flag == "-h") {
      cmd.kind = CommandKind::kHelp;
      return ParseResult{cmd, ""};
    }
    const bool known = flag == "--bind" || flag == "--port" || flag == "--tls-cert" || flag == "--tls-key" ||
                       flag == "--cluster-domain" || flag == "--threads" || flag == "--log-level";
    if (!known) return Fail("serve: unknown flag " + flag);
    auto value = r.Value();
    if (!value || value->empty()) {
      return Fail("serve: " + flag + " needs a value");
    }
    const std::string v(*value);
    if (flag == "--bind") {
      c.bind_address = v;
    } else if (flag == "--port") {
      if (!ParseInt(v, 1, 65535, &c.port)) return Fail("serve: --port must be a number from 1 to 65535, got \"" + v + "\"");
    } else if (flag == "--tls-cert") {
      c.tls_cert_file = v;
    } else if (flag == "--tls-key") {
      c.tls_key_file = v;
    } else if (flag == "--cluster-domain") {
      flag_domain = v;
    } else if (flag == "--threads") {
      if (!ParseInt(v, 1, 4096, &c.threads)) return Fail("serve: --threads must be a number from 1 to 4096, got \"" + v + "\"");
    } else if (flag == "--log-level") {
      if (!IsLogLevel(v)) return Fail("serve: --log-level must be one of trace, debug, info, warn, error, critical, off; got \"" + v + "\"");
      c.log_level = v;
    }
  }
  if (flag_domain) c.cluster_domain = *flag_domain;
  if (!IsDnsSubdomain(c.cluster_domain)) {
    return Fail("serve: cluster domain \"" + c.cluster_domain + "\" is not a DNS name (from " +
                (flag_domain ? "--cluster-domain" : "CLUSTER_DOMAIN") + ")");
  }
  if (c.tls_cert_file.empty() || c.tls_key_file.empty()) {
    return Fail("serve: --tls-cert and --tls-key are required (admission webhooks are called over HTTPS only)");
  }
  return ParseResult{cmd, ""};
}

ParseResult ParseReview(const std::vector<std::string>& args, const EnvLookup& env) {
  Command cmd;
  cmd.kind = CommandKind::kReview;
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) cmd.config.cluster_domain = *domain;
  std::optional<Endpoint> endpoint;
  bool have_input = false;
  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string arg(r.Next());
    if (arg == "--mutate" || arg == "--validate") {
      const Endpoint e = arg == "--mutate" ? Endpoint::kMutate : Endpoint::kValidate;
      if (endpoint && *endpoint != e) return Fail("review: give one of --mutate or --validate, not both");
      endpoint = e;
    } else if (arg == "--cluster-domain") {
      auto value = r.Value();
      if (!value || !IsDnsSubdomain(*value)) return Fail("review: --cluster-domain needs a DNS name");
      cmd.config.cluster_domain = std::string(*value);
    } else if (arg == "--help" || arg == "-h") {
      cmd.kind = CommandKind::kHelp;
      return ParseResult{cmd, ""};
    } else if (arg.starts_with("--")) {
      return Fail("review: unknown flag " + arg);
    } else {
      if (have_input) return Fail("review: more than one input file given");
      cmd.input = arg;
      have_input = true;
    }
  }
  if (!endpoint) return Fail("review: give --mutate or --validate");
  cmd.endpoint = *endpoint;
  if (!IsDnsSubdomain(cmd.config.cluster_domain)) return Fail("review: CLUSTER_DOMAIN is not a DNS name");
  return ParseResult{cmd, ""};
}

}  // namespace

ParseResult ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env) {
  if (args.size() < 2) return Fail("no command given; run 'ray-webhook --help'");
  const std::string& first = args[1];
  if (first == "--help" || first == "-h" || first == "help") {
    Command cmd;
    cmd.kind = CommandKind::kHelp;
    return ParseResult{cmd, ""};
  }
  if (first == "--version") {
    Command cmd;
    cmd.kind = CommandKind::kVersion;
    return ParseResult{cmd, ""};
  }
  if (first == "serve") return ParseServe(args, env);
  if (first == "review") return ParseReview(args, env);
  return Fail("unknown command \"" + first + "\"; run 'ray-webhook --help'");
}

std::string UsageText() {
  return R"(ray-webhook: admission webhook for the Pods of Ray clusters

Usage:
  ray-webhook serve --tls-cert FILE --tls-key FILE [flags]
  ray-webhook review (--mutate|--validate) [FILE|-]
  ray-webhook --help | --version

serve flags:
  --bind ADDR              address to listen on (default 0.0.0.0)
  --port N                 HTTPS port (default 8443)
  --tls-cert FILE          serving certificate, PEM (required)
  --tls-key FILE           private key of the serving certificate, PEM (required)
  --cluster-domain DOMAIN  cluster DNS domain for FQ_RAY_IP (default $CLUSTER_DOMAIN,
                           else cluster.local; must match the KubeRay operator's)
  --threads N              connections served at once (default 64)
  --log-level LEVEL        trace, debug, info, warn, error, critical or off (default info)

review reads one AdmissionReview from FILE (or stdin when FILE is - or absent),
prints the answer AdmissionReview on stdout and touches no network. It exits 1
when the input is not a usable AdmissionReview.

Endpoints: POST /mutate, POST /validate, GET /healthz, GET /readyz.
)";
}

}  // namespace ray_webhook
