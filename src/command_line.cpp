#include "ray_webhook/command_line.h"

#include <algorithm>
#include <charconv>

#include "ray_webhook/dns_name.h"
#include "ray_webhook/https_get.h"

namespace ray_webhook {
namespace {

bool ParseInt(std::string_view text, int min, int max, int* out) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

std::optional<RuleMode> ParseRuleMode(std::string_view s) {
  if (s == "enforce") return RuleMode::kEnforce;
  if (s == "warn") return RuleMode::kWarn;
  if (s == "off") return RuleMode::kOff;
  return std::nullopt;
}

std::optional<HeadUniqueness> ParseHeadUniqueness(std::string_view s) {
  if (s == "name") return HeadUniqueness{true, false};
  if (s == "lookup") return HeadUniqueness{false, true};
  if (s == "name+lookup") return HeadUniqueness{true, true};
  if (s == "off") return HeadUniqueness{false, false};
  return std::nullopt;
}

// "2s", "500ms", "50us", "1m" or a bare number of seconds, from min up to max.
std::optional<std::chrono::microseconds> ParseDuration(std::string_view s, std::chrono::microseconds min,
                                                       std::chrono::microseconds max) {
  long long scale = 1000000;
  if (s.ends_with("us")) {
    scale = 1;
    s.remove_suffix(2);
  } else if (s.ends_with("ms")) {
    scale = 1000;
    s.remove_suffix(2);
  } else if (s.ends_with("s")) {
    s.remove_suffix(1);
  } else if (s.ends_with("m")) {
    scale = 60000000;
    s.remove_suffix(1);
  }
  int n = 0;
  if (!ParseInt(s, 0, 3600 * 1000, &n)) return std::nullopt;
  const std::chrono::microseconds d(n * scale);
  if (d < min || d > max) return std::nullopt;
  return d;
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
  std::optional<std::string> api_server, token_file, ca_file, cert_dir;

  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string flag(r.Next());
    if (flag == "--help" || flag == "-h") {
      cmd.kind = CommandKind::kHelp;
      return ParseResult{cmd, ""};
    }
    static const std::vector<std::string_view> kKnown = {
        "--bind", "--port", "--tls-cert", "--tls-key", "--cluster-domain", "--threads", "--log-level",
        "--head-uniqueness", "--head-name-mode", "--second-head-mode", "--duplicate-mount-mode",
        "--head-lookup-failure", "--kube-api-server", "--kube-token-file", "--kube-ca-file", "--kube-api-timeout",
        "--cert-dir", "--client-ca", "--tls-min-version", "--max-connections", "--idle-timeout", "--request-timeout",
        "--drain-delay", "--shutdown-grace", "--cert-reload-interval", "--busy-poll", "--probe-port"};
    const bool known = std::find(kKnown.begin(), kKnown.end(), flag) != kKnown.end();
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
    } else if (flag == "--probe-port") {
      if (!ParseInt(v, 0, 65535, &c.probe_port)) return Fail("serve: --probe-port must be a number from 0 to 65535, got \"" + v + "\"");
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
    } else if (flag == "--head-uniqueness") {
      auto h = ParseHeadUniqueness(v);
      if (!h) return Fail("serve: --head-uniqueness must be name, lookup, name+lookup or off; got \"" + v + "\"");
      c.head_uniqueness = *h;
    } else if (flag == "--head-name-mode" || flag == "--second-head-mode" || flag == "--duplicate-mount-mode") {
      auto m = ParseRuleMode(v);
      if (!m) return Fail("serve: " + flag + " must be enforce, warn or off; got \"" + v + "\"");
      (flag == "--head-name-mode" ? c.head_name_mode
       : flag == "--second-head-mode" ? c.second_head_mode
                                      : c.duplicate_mount_mode) = *m;
    } else if (flag == "--head-lookup-failure") {
      if (v != "allow" && v != "deny") return Fail("serve: --head-lookup-failure must be allow or deny; got \"" + v + "\"");
      c.deny_on_lookup_failure = v == "deny";
    } else if (flag == "--kube-api-server") {
      if (!ParseHttpsUrl(v)) return Fail("serve: --kube-api-server must be an https://HOST[:PORT] URL (an IPv6 address in brackets); got \"" + v + "\"");
      api_server = v;
    } else if (flag == "--kube-token-file") {
      token_file = v;
    } else if (flag == "--kube-ca-file") {
      ca_file = v;
    } else if (flag == "--cert-dir") {
      cert_dir = v;
    } else if (flag == "--client-ca") {
      c.client_ca_file = v;
    } else if (flag == "--tls-min-version") {
      if (v != "1.2" && v != "1.3") return Fail("serve: --tls-min-version must be 1.2 or 1.3; got \"" + v + "\"");
      c.tls_min_version = v == "1.3" ? 13 : 12;
    } else if (flag == "--max-connections") {
      if (!ParseInt(v, 1, 65536, &c.max_connections)) return Fail("serve: --max-connections must be a number from 1 to 65536, got \"" + v + "\"");
    } else if (flag == "--idle-timeout" || flag == "--request-timeout" || flag == "--drain-delay" ||
               flag == "--shutdown-grace" || flag == "--cert-reload-interval") {
      const auto min = flag == "--drain-delay" ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1);
      auto d = ParseDuration(v, min, std::chrono::minutes(10));
      if (!d) return Fail("serve: " + flag + " must be a duration such as 5s or 500ms, at most 10m; got \"" + v + "\"");
      (flag == "--idle-timeout"      ? c.idle_timeout
       : flag == "--request-timeout" ? c.request_timeout
       : flag == "--drain-delay"     ? c.drain_delay
       : flag == "--shutdown-grace"  ? c.shutdown_grace
                                     : c.cert_reload_interval) = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    } else if (flag == "--kube-api-timeout") {
      auto d = ParseDuration(v, std::chrono::milliseconds(1), std::chrono::seconds(60));
      if (!d) return Fail("serve: --kube-api-timeout must be a duration such as 2s or 500ms, at most 60s; got \"" + v + "\"");
      c.kube_api.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    } else if (flag == "--busy-poll") {
      auto d = ParseDuration(v, std::chrono::microseconds(0), std::chrono::milliseconds(1));
      if (!d) return Fail("serve: --busy-poll must be a duration such as 50us or 0, at most 1ms; got \"" + v + "\"");
      c.busy_poll = *d;
    }
  }
  // In-cluster configuration, as client-go's rest.InClusterConfig: the service
  // host and port from the environment, the service account's token and CA.
  if (!api_server) {
    auto host = env("KUBERNETES_SERVICE_HOST");
    auto port = env("KUBERNETES_SERVICE_PORT");
    if (host && port && !host->empty() && !port->empty()) {
      const bool ipv6 = host->find(':') != std::string::npos;
      api_server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
      if (!token_file) token_file = std::string(kServiceAccountTokenFile);
      if (!ca_file) ca_file = std::string(kServiceAccountCaFile);
    }
  }
  if (api_server) {
    c.kube_api.server = *api_server;
    c.kube_api.token_file = token_file.value_or("");
    c.kube_api.ca_file = ca_file.value_or("");
  }
  if (flag_domain) c.cluster_domain = *flag_domain;
  if (!IsDnsSubdomain(c.cluster_domain)) {
    return Fail("serve: cluster domain \"" + c.cluster_domain + "\" is not a DNS name (from " +
                (flag_domain ? "--cluster-domain" : "CLUSTER_DOMAIN") + ")");
  }
  if (cert_dir) {
    // controller-runtime's layout: tls.crt and tls.key in one directory.
    if (!c.tls_cert_file.empty() || !c.tls_key_file.empty()) {
      return Fail("serve: give --cert-dir or --tls-cert/--tls-key, not both");
    }
    const std::string dir = cert_dir->ends_with("/") ? *cert_dir : *cert_dir + "/";
    c.tls_cert_file = dir + "tls.crt";
    c.tls_key_file = dir + "tls.key";
  }
  if (c.tls_cert_file.empty() || c.tls_key_file.empty()) {
    return Fail("serve: --tls-cert and --tls-key (or --cert-dir) are required (admission webhooks are called over HTTPS only)");
  }
  if (c.probe_port != 0 && c.probe_port == c.port) return Fail("serve: --probe-port must differ from --port");
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
  ray-webhook serve (--tls-cert FILE --tls-key FILE | --cert-dir DIR) [flags]
  ray-webhook review (--mutate|--validate) [FILE|-]
  ray-webhook --help | --version

serve flags:
  --bind ADDR              address to listen on (default 0.0.0.0)
  --port N                 HTTPS port (default 8443)
  --probe-port N           plain-HTTP port for /healthz and /readyz only, for kubelet probes; 0 turns it off (default 8081)
  --tls-cert FILE          serving certificate, PEM (reloaded when the file changes)
  --tls-key FILE           private key of the serving certificate, PEM
  --cert-dir DIR           DIR/tls.crt and DIR/tls.key instead (controller-runtime's layout)
  --client-ca FILE         require client certificates signed by this CA (API server authentication)
  --tls-min-version V      1.2 or 1.3 (default 1.2)
  --cluster-domain DOMAIN  cluster DNS domain for FQ_RAY_IP (default $CLUSTER_DOMAIN,
                           else cluster.local; must match the KubeRay operator's)
  --threads N              workers for reviews that wait on the Kubernetes API, started on demand (default 64)
  --max-connections N      connections open at once; beyond it a new one closes the oldest idle one (default 2048)
  --idle-timeout D         keep-alive wait between requests (default 30s)
  --request-timeout D      deadline to read and answer one request; slower clients are cut off (default 10s)
  --busy-poll D            after a short wait, poll this long for the next request before sleeping,
                           e.g. 50us; 0 turns it off (default 100us; see README, "Busy polling")
  --drain-delay D          after SIGTERM, /readyz is 503 and new connections are still accepted for D (default 5s)
  --shutdown-grace D       then in-flight requests finish; exit within D (default 30s)
  --log-level LEVEL        trace, debug, info, warn, error, critical or off (default info)

head uniqueness (one head Pod per RayCluster):
  --head-uniqueness MODE   name, lookup, name+lookup or off (default name+lookup)
  --head-name-mode M       the deterministic head name rule: enforce, warn or off (default enforce)
  --second-head-mode M     the second-head lookup: enforce, warn or off (default enforce)
  --head-lookup-failure A  when the API cannot answer: allow (with a warning) or deny (default allow)
  --kube-api-server URL    Kubernetes API (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)
  --kube-token-file FILE   bearer token, re-read when it changes (default: the service account's)
  --kube-ca-file FILE      CA of the API server (default: the service account's)
  --kube-api-timeout D     lookup timeout, e.g. 2s or 500ms (default 2s)

other rules:
  --duplicate-mount-mode M enforce, warn or off (default enforce)

review reads one AdmissionReview from FILE (or stdin when FILE is - or absent),
prints the answer AdmissionReview on stdout and touches no network. It exits 1
when the input is not a usable AdmissionReview.

Endpoints: POST /mutate, POST /validate, GET /healthz, GET /readyz, GET /metrics.
)";
}

}  // namespace ray_webhook
