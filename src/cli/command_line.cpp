#include "command_line.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "ray_webhook/core/dns_name.h"
#include "ray_webhook/kube/https_get.h"

namespace ray_webhook {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

bool ParseInt(std::string_view text, int min, int max, int* out) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

// "2s", "500ms", "50us", "1m" or a bare number of seconds, from min up to max.
std::optional<microseconds> ParseDuration(std::string_view s, microseconds min, microseconds max) {
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
  const microseconds d(n * scale);
  if (d < min || d > max) return std::nullopt;
  return d;
}

// The shortest of "Ns", "Nms" and "Nus" that is exact.
std::string ShowDuration(microseconds d) {
  const long long us = d.count();
  if (us % 1000000 == 0) return std::to_string(us / 1000000) + "s";
  if (us % 1000 == 0) return std::to_string(us / 1000) + "ms";
  return std::to_string(us) + "us";
}

std::string Got(std::string_view value) { return "\"" + std::string(value) + "\""; }

Status IntFlag(std::string_view name, std::string_view v, int min, int max, int* out) {
  if (ParseInt(v, min, max, out)) return Status::Ok();
  return Status::Error(std::string(name) + " must be a number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", got " + Got(v));
}

template <typename Duration>
Status DurationFlag(std::string_view name, std::string_view v, microseconds min, microseconds max,
                    std::string_view examples_and_bound, Duration* out) {
  auto d = ParseDuration(v, min, max);
  if (!d) {
    return Status::Error(std::string(name) + " must be a duration such as " + std::string(examples_and_bound) +
                         "; got " + Got(v));
  }
  *out = std::chrono::duration_cast<Duration>(*d);
  return Status::Ok();
}

Status RuleModeFlag(std::string_view name, std::string_view v, RuleMode* out) {
  if (v == "enforce") {
    *out = RuleMode::kEnforce;
  } else if (v == "warn") {
    *out = RuleMode::kWarn;
  } else if (v == "off") {
    *out = RuleMode::kOff;
  } else {
    return Status::Error(std::string(name) + " must be enforce, warn or off; got " + Got(v));
  }
  return Status::Ok();
}

std::string ShowRuleMode(RuleMode m) {
  return m == RuleMode::kEnforce ? "enforce" : m == RuleMode::kWarn ? "warn" : "off";
}

std::string ShowHeadUniqueness(HeadUniqueness h) {
  return h.name && h.lookup ? "name+lookup" : h.name ? "name" : h.lookup ? "lookup" : "off";
}

constexpr std::string_view kServeSection = "serve flags";
constexpr std::string_view kHeadSection = "head uniqueness (one head Pod per RayCluster)";
constexpr std::string_view kRulesSection = "other rules";
constexpr std::string_view kAuditSection = "cluster audit (needs list RBAC: deploy/overlays/audit)";

ServerConfig& Server(ServeSettings& s) { return s.command.config; }
const ServerConfig& Server(const ServeSettings& s) { return s.command.config; }
std::string None(const ServeSettings&) { return ""; }

// The flags of `serve`, in the order the usage lists them.
const ServeFlag kServeFlags[] = {
    {"--bind", "ADDR", kServeSection, "address to listen on",
     [](ServeSettings& s, std::string_view v) {
       Server(s).bind_address = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings& s) { return Server(s).bind_address; }},
    {"--port", "N", kServeSection, "HTTPS port",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--port", v, 1, 65535, &Server(s).port); },
     [](const ServeSettings& s) { return std::to_string(Server(s).port); }},
    {"--probe-port", "N", kServeSection,
     "plain-HTTP port for /healthz and /readyz only, for kubelet probes; 0 turns it off",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--probe-port", v, 0, 65535, &Server(s).probe_port); },
     [](const ServeSettings& s) { return std::to_string(Server(s).probe_port); }},
    {"--tls-cert", "FILE", kServeSection, "serving certificate, PEM (reloaded when the file changes)",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.cert_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--tls-key", "FILE", kServeSection, "private key of the serving certificate, PEM",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.key_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--cert-dir", "DIR", kServeSection, "DIR/tls.crt and DIR/tls.key instead (controller-runtime's layout)",
     [](ServeSettings& s, std::string_view v) {
       s.cert_dir = std::string(v);
       return Status::Ok();
     },
     None},
    {"--cert-reload-interval", "D", kServeSection, "how often the certificate files are checked for new bytes",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--cert-reload-interval", v, milliseconds(1), std::chrono::minutes(10),
                           "5s or 500ms, at most 10m", &Server(s).tls.reload_interval);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).tls.reload_interval); }},
    {"--client-ca", "FILE", kServeSection, "require client certificates signed by this CA (API server authentication)",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.client_ca_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--tls-min-version", "V", kServeSection, "1.2 or 1.3",
     [](ServeSettings& s, std::string_view v) {
       if (v != "1.2" && v != "1.3") return Status::Error("--tls-min-version must be 1.2 or 1.3; got " + Got(v));
       Server(s).tls.min_version = v == "1.3" ? 13 : 12;
       return Status::Ok();
     },
     [](const ServeSettings& s) { return std::string(Server(s).tls.min_version == 13 ? "1.3" : "1.2"); }},
    {"--cluster-domain", "DOMAIN", kServeSection, "cluster DNS domain for FQ_RAY_IP; must match the KubeRay operator's",
     [](ServeSettings& s, std::string_view v) {
       s.cluster_domain = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings& s) { return "$CLUSTER_DOMAIN, else " + Server(s).policy.cluster_domain; }},
    {"--threads", "N", kServeSection, "workers for reviews that wait on the Kubernetes API, started on demand",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--threads", v, 1, 4096, &Server(s).threads); },
     [](const ServeSettings& s) { return std::to_string(Server(s).threads); }},
    {"--max-connections", "N", kServeSection,
     "connections open at once; beyond it a new one closes the oldest idle one",
     [](ServeSettings& s, std::string_view v) {
       return IntFlag("--max-connections", v, 1, 65536, &Server(s).max_connections);
     },
     [](const ServeSettings& s) { return std::to_string(Server(s).max_connections); }},
    {"--idle-timeout", "D", kServeSection, "keep-alive wait between requests",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--idle-timeout", v, milliseconds(1), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).idle_timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).idle_timeout); }},
    {"--request-timeout", "D", kServeSection, "deadline to read and answer one request; slower clients are cut off",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--request-timeout", v, milliseconds(1), std::chrono::minutes(10),
                           "5s or 500ms, at most 10m", &Server(s).request_timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).request_timeout); }},
    {"--busy-poll", "D", kServeSection,
     "after a short wait, poll this long for the next request before sleeping; 0 turns it off",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--busy-poll", v, microseconds(0), milliseconds(1), "50us or 0, at most 1ms",
                           &Server(s).busy_poll);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).busy_poll); }},
    {"--drain-delay", "D", kServeSection, "after SIGTERM, /readyz is 503 and new connections are still accepted for D",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--drain-delay", v, milliseconds(0), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).drain_delay);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).drain_delay); }},
    {"--shutdown-grace", "D", kServeSection, "then in-flight requests finish; exit within D",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--shutdown-grace", v, milliseconds(1), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).shutdown_grace);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).shutdown_grace); }},
    {"--log-level", "LEVEL", kServeSection, "trace, debug, info, warn, error, critical or off",
     [](ServeSettings& s, std::string_view v) {
       for (std::string_view level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
         if (v == level) {
           s.command.log_level = std::string(v);
           return Status::Ok();
         }
       }
       return Status::Error("--log-level must be one of trace, debug, info, warn, error, critical, off; got " + Got(v));
     },
     [](const ServeSettings& s) { return s.command.log_level; }},

    {"--head-uniqueness", "MODE", kHeadSection, "name, lookup, name+lookup or off",
     [](ServeSettings& s, std::string_view v) {
       HeadUniqueness& h = Server(s).policy.head_uniqueness;
       if (v == "name") {
         h = {true, false};
       } else if (v == "lookup") {
         h = {false, true};
       } else if (v == "name+lookup") {
         h = {true, true};
       } else if (v == "off") {
         h = {false, false};
       } else {
         return Status::Error("--head-uniqueness must be name, lookup, name+lookup or off; got " + Got(v));
       }
       return Status::Ok();
     },
     [](const ServeSettings& s) { return ShowHeadUniqueness(Server(s).policy.head_uniqueness); }},
    {"--head-name-mode", "M", kHeadSection, "the deterministic head name rule: enforce, warn or off",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--head-name-mode", v, &Server(s).policy.head_name_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.head_name_mode); }},
    {"--second-head-mode", "M", kHeadSection, "the second-head lookup: enforce, warn or off",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--second-head-mode", v, &Server(s).policy.second_head_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.second_head_mode); }},
    {"--head-lookup-failure", "A", kHeadSection, "when the API cannot answer: allow (with a warning) or deny",
     [](ServeSettings& s, std::string_view v) {
       if (v != "allow" && v != "deny") {
         return Status::Error("--head-lookup-failure must be allow or deny; got " + Got(v));
       }
       Server(s).policy.deny_on_lookup_failure = v == "deny";
       return Status::Ok();
     },
     [](const ServeSettings& s) { return std::string(Server(s).policy.deny_on_lookup_failure ? "deny" : "allow"); }},
    {"--kube-api-server", "URL", kHeadSection, "Kubernetes API",
     [](ServeSettings& s, std::string_view v) {
       if (!ParseHttpsUrl(v)) {
         return Status::Error(
             "--kube-api-server must be an https://HOST[:PORT] URL (an IPv6 address in brackets); got " + Got(v));
       }
       s.api_server = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"); }},
    {"--kube-token-file", "FILE", kHeadSection, "bearer token, re-read when it changes",
     [](ServeSettings& s, std::string_view v) {
       s.token_file = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("the service account's"); }},
    {"--kube-ca-file", "FILE", kHeadSection, "CA of the API server",
     [](ServeSettings& s, std::string_view v) {
       s.ca_file = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("the service account's"); }},
    {"--kube-api-timeout", "D", kHeadSection, "lookup timeout",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--kube-api-timeout", v, milliseconds(1), std::chrono::seconds(60),
                           "2s or 500ms, at most 60s", &Server(s).kube_api.timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).kube_api.timeout); }},

    {"--duplicate-mount-mode", "M", kRulesSection, "enforce, warn or off",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--duplicate-mount-mode", v, &Server(s).policy.duplicate_mount_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.duplicate_mount_mode); }},

    {"--audit-interval", "D", kAuditSection,
     "audit the cluster's Ray Pods and objects every D in the background, into the audit gauges of /metrics; "
     "off or 0 turns it off",
     [](ServeSettings& s, std::string_view v) {
       if (v == "off" || v == "0") {
         Server(s).audit_interval = milliseconds(0);
         return Status::Ok();
       }
       return DurationFlag("--audit-interval", v, std::chrono::seconds(1), std::chrono::minutes(1440),
                           "5m or 30s, from 1s to 1440m, or off", &Server(s).audit_interval);
     },
     [](const ServeSettings& s) {
       return Server(s).audit_interval.count() == 0 ? std::string("off") : ShowDuration(Server(s).audit_interval);
     }},
};

const ServeFlag* FindServeFlag(std::string_view name) {
  for (const ServeFlag& f : kServeFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
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

Command HelpCommand() {
  Command cmd;
  cmd.kind = CommandKind::kHelp;
  return cmd;
}

// The API the flags name, else the in-cluster configuration, as client-go's
// rest.InClusterConfig: the service host and port from the environment, the
// service account's token and CA.
void ApplyKubeApi(ServeSettings& s, const EnvLookup& env) {
  ServerConfig& c = s.command.config;
  if (!s.api_server) {
    auto host = env("KUBERNETES_SERVICE_HOST");
    auto port = env("KUBERNETES_SERVICE_PORT");
    if (host && port && !host->empty() && !port->empty()) {
      const bool ipv6 = host->find(':') != std::string::npos;
      s.api_server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
      if (!s.token_file) s.token_file = std::string(kServiceAccountTokenFile);
      if (!s.ca_file) s.ca_file = std::string(kServiceAccountCaFile);
    }
  }
  if (s.api_server) {
    c.kube_api.server = *s.api_server;
    c.kube_api.token_file = s.token_file.value_or("");
    c.kube_api.ca_file = s.ca_file.value_or("");
  }
}

Result<Command> ParseServe(const std::vector<std::string>& args, const EnvLookup& env) {
  ServeSettings s;
  s.command.kind = CommandKind::kServe;
  ServerConfig& c = s.command.config;
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) c.policy.cluster_domain = *domain;

  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string name(r.Next());
    if (name == "--help" || name == "-h") return HelpCommand();
    const ServeFlag* flag = FindServeFlag(name);
    if (flag == nullptr) return Status::Error("serve: unknown flag " + name);
    auto value = r.Value();
    if (!value || value->empty()) return Status::Error("serve: " + name + " needs a value");
    if (Status set = flag->set(s, *value); !set.ok()) return Status::Error("serve: " + set.message());
  }
  ApplyKubeApi(s, env);
  if (s.cluster_domain) c.policy.cluster_domain = *s.cluster_domain;
  if (!IsDnsSubdomain(c.policy.cluster_domain)) {
    return Status::Error("serve: cluster domain \"" + c.policy.cluster_domain + "\" is not a DNS name (from " +
                         (s.cluster_domain ? "--cluster-domain" : "CLUSTER_DOMAIN") + ")");
  }
  if (s.cert_dir) {
    // controller-runtime's layout: tls.crt and tls.key in one directory.
    if (!c.tls.cert_file.empty() || !c.tls.key_file.empty()) {
      return Status::Error("serve: give --cert-dir or --tls-cert/--tls-key, not both");
    }
    const std::string dir = s.cert_dir->ends_with("/") ? *s.cert_dir : *s.cert_dir + "/";
    c.tls.cert_file = dir + "tls.crt";
    c.tls.key_file = dir + "tls.key";
  }
  if (c.tls.cert_file.empty() || c.tls.key_file.empty()) {
    return Status::Error(
        "serve: --tls-cert and --tls-key (or --cert-dir) are required (admission webhooks are called over HTTPS "
        "only)");
  }
  if (c.probe_port != 0 && c.probe_port == c.port) return Status::Error("serve: --probe-port must differ from --port");
  return std::move(s.command);
}

Result<Command> ParseReview(const std::vector<std::string>& args, const EnvLookup& env) {
  Command cmd;
  cmd.kind = CommandKind::kReview;
  PolicyConfig& policy = cmd.config.policy;
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) policy.cluster_domain = *domain;
  std::optional<Endpoint> endpoint;
  bool have_input = false;
  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string arg(r.Next());
    if (arg == "--mutate" || arg == "--validate") {
      const Endpoint e = arg == "--mutate" ? Endpoint::kMutate : Endpoint::kValidate;
      if (endpoint && *endpoint != e) return Status::Error("review: give one of --mutate or --validate, not both");
      endpoint = e;
    } else if (arg == "--cluster-domain") {
      auto value = r.Value();
      if (!value || !IsDnsSubdomain(*value)) return Status::Error("review: --cluster-domain needs a DNS name");
      policy.cluster_domain = std::string(*value);
    } else if (arg == "--help" || arg == "-h") {
      return HelpCommand();
    } else if (arg.starts_with("--")) {
      return Status::Error("review: unknown flag " + arg);
    } else {
      if (have_input) return Status::Error("review: more than one input file given");
      cmd.input = arg;
      have_input = true;
    }
  }
  if (!endpoint) return Status::Error("review: give --mutate or --validate");
  cmd.endpoint = *endpoint;
  if (!IsDnsSubdomain(policy.cluster_domain)) return Status::Error("review: CLUSTER_DOMAIN is not a DNS name");
  return cmd;
}

// The flags of serve that audit takes too: the API and the cluster domain.
constexpr std::string_view kAuditSharedFlags[] = {"--kube-api-server", "--kube-token-file", "--kube-ca-file",
                                                  "--kube-api-timeout", "--cluster-domain"};

Result<Command> ParseAudit(const std::vector<std::string>& args, const EnvLookup& env) {
  ServeSettings s;
  s.command.kind = CommandKind::kAudit;
  ServerConfig& c = s.command.config;
  // A page of a large list takes longer than one head lookup.
  c.kube_api.timeout = std::chrono::seconds(30);
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) c.policy.cluster_domain = *domain;
  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string arg(r.Next());
    if (arg == "--help" || arg == "-h") return HelpCommand();
    if (arg == "-" || !arg.starts_with("-")) {
      s.command.audit_inputs.push_back(arg);
      continue;
    }
    auto value = [&]() -> Result<std::string> {
      auto v = r.Value();
      if (!v || v->empty()) return Status::Error("audit: " + arg + " needs a value");
      return std::string(*v);
    };
    if (arg == "--output" || arg == "-o") {
      Result<std::string> v = value();
      if (!v.ok()) return v.status();
      if (*v != "table" && *v != "json") return Status::Error("audit: --output must be table or json; got " + Got(*v));
      s.command.audit_output = *v == "json" ? AuditOutput::kJson : AuditOutput::kTable;
    } else if (arg == "--namespace" || arg == "-n") {
      Result<std::string> v = value();
      if (!v.ok()) return v.status();
      if (!IsDnsSubdomain(*v) || v->find('.') != std::string::npos) {
        return Status::Error("audit: --namespace must be a namespace name; got " + Got(*v));
      }
      s.command.audit_namespace = *v;
    } else if (std::find(std::begin(kAuditSharedFlags), std::end(kAuditSharedFlags), arg) !=
               std::end(kAuditSharedFlags)) {
      Result<std::string> v = value();
      if (!v.ok()) return v.status();
      if (Status set = FindServeFlag(arg)->set(s, *v); !set.ok()) return Status::Error("audit: " + set.message());
    } else {
      return Status::Error("audit: unknown flag " + arg);
    }
  }
  if (s.cluster_domain) c.policy.cluster_domain = *s.cluster_domain;
  if (!IsDnsSubdomain(c.policy.cluster_domain)) {
    return Status::Error("audit: cluster domain \"" + c.policy.cluster_domain + "\" is not a DNS name");
  }
  const bool api_flags = s.api_server || s.token_file || s.ca_file;
  if (!s.command.audit_inputs.empty()) {
    if (api_flags) return Status::Error("audit: give files or the Kubernetes API flags, not both");
    if (!s.command.audit_namespace.empty()) {
      return Status::Error("audit: --namespace selects what is listed from the API; it does not filter files");
    }
    return std::move(s.command);
  }
  ApplyKubeApi(s, env);
  if (!c.kube_api.configured()) {
    return Status::Error(
        "audit: nothing to read: give files (or - for stdin), or --kube-api-server (or run in a cluster)");
  }
  return std::move(s.command);
}

}  // namespace

std::span<const ServeFlag> ServeFlags() { return kServeFlags; }

Result<Command> ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env) {
  if (args.size() < 2) return Status::Error("no command given; run 'ray-webhook --help'");
  const std::string& first = args[1];
  if (first == "--help" || first == "-h" || first == "help") return HelpCommand();
  if (first == "--version") {
    Command cmd;
    cmd.kind = CommandKind::kVersion;
    return cmd;
  }
  if (first == "serve") return ParseServe(args, env);
  if (first == "review") return ParseReview(args, env);
  if (first == "audit") return ParseAudit(args, env);
  return Status::Error("unknown command \"" + first + "\"; run 'ray-webhook --help'");
}

std::string UsageText() {
  std::string text = R"(ray-webhook: admission webhook for the Pods of Ray clusters

Usage:
  ray-webhook serve (--tls-cert FILE --tls-key FILE | --cert-dir DIR) [flags]
  ray-webhook review (--mutate|--validate) [--cluster-domain DOMAIN] [FILE|-]
  ray-webhook audit [--output table|json] [--cluster-domain DOMAIN] (FILE|-)...
  ray-webhook audit [--output table|json] [--cluster-domain DOMAIN] [--namespace NS] [--kube-* flags]
  ray-webhook --help | --version
)";
  const ServeSettings defaults;
  std::string_view section;
  for (const ServeFlag& f : kServeFlags) {
    if (f.section != section) {
      section = f.section;
      text += "\n" + std::string(section) + ":\n";
    }
    std::string line = "  " + std::string(f.name) + " " + std::string(f.argument);
    line.resize(std::max<std::size_t>(line.size() + 1, 29), ' ');
    line += f.help;
    if (const std::string shown = f.shown(defaults); !shown.empty()) line += " (default " + shown + ")";
    text += line + "\n";
  }
  text += R"(
Durations are written 500ms, 2s, 1m or 50us.

review reads one AdmissionReview from FILE (or stdin when FILE is - or absent),
prints the answer AdmissionReview on stdout and touches no network. It exits 1
when the input is not a usable AdmissionReview.

audit applies every rule to objects that exist: Pods and ray.io RayClusters,
RayJobs and RayServices read from FILEs (JSON or YAML, several documents, List
objects, e.g. kubectl get pods,rayclusters,rayjobs,rayservices -A -o json) or,
without FILEs, listed from the Kubernetes API (the --kube-* flags of serve, or
in-cluster; --namespace for one namespace). Besides the rules of /mutate and
/validate it reports RayClusters with more than one live head Pod, worker Pods
of one group whose specs differ, and Ray Pods the FQDN mutation would still
change. It prints a table (or --output json) and exits 0 when it found
nothing, 1 when it found something, 2 on bad input or usage.

Endpoints: POST /mutate, POST /validate, GET /healthz, GET /readyz, GET /metrics.
)";
  return text;
}

}  // namespace ray_webhook
