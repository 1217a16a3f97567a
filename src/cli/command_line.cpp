#include "command_line.h"

#include <algorithm>
#include <chrono>

#include "flag_values.h"
#include "ray_webhook/core/pod/dns_name.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "spec_flags.h"

namespace ray_webhook {
namespace {

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
  // Settings rather than a bare command, for the spec flags' table entries.
  ServeSettings s;
  Command& cmd = s.command;
  cmd.kind = CommandKind::kReview;
  PolicyConfig& policy = cmd.config.policy;
  if (auto domain = env("CLUSTER_DOMAIN"); domain && !domain->empty()) policy.cluster_domain = *domain;
  std::optional<Endpoint> endpoint;
  bool have_input = false;
  FlagReader r(args, 2);
  while (!r.Done()) {
    const std::string arg(r.Next());
    if (arg == "--mutate" || arg == "--validate" || arg == "--admit") {
      const Endpoint e = arg == "--mutate"     ? Endpoint::kMutate
                         : arg == "--validate" ? Endpoint::kValidate
                                               : Endpoint::kAdmit;
      if (endpoint && *endpoint != e) return Status::Error("review: give one of --mutate, --validate or --admit");
      endpoint = e;
    } else if (arg == "--cluster-domain") {
      auto value = r.Value();
      if (!value || !IsDnsSubdomain(*value)) return Status::Error("review: --cluster-domain needs a DNS name");
      policy.cluster_domain = std::string(*value);
    } else if (std::ranges::find(SpecSharedFlags(), arg) != SpecSharedFlags().end()) {
      auto value = r.Value();
      if (!value || value->empty()) return Status::Error("review: " + arg + " needs a value");
      if (Status set = FindServeFlag(arg)->set(s, *value); !set.ok()) return Status::Error("review: " + set.message());
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
  if (!endpoint) return Status::Error("review: give --mutate, --validate or --admit");
  cmd.endpoint = *endpoint;
  if (!IsDnsSubdomain(policy.cluster_domain)) return Status::Error("review: CLUSTER_DOMAIN is not a DNS name");
  return std::move(cmd);
}

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
      if (*v != "table" && *v != "json" && *v != "report") {
        return Status::Error("audit: --output must be table, json or report; got " + Got(*v));
      }
      s.command.audit_output = *v == "json"     ? AuditOutput::kJson
                               : *v == "report" ? AuditOutput::kReport
                                                : AuditOutput::kTable;
    } else if (arg == "--report-api") {
      Result<std::string> v = value();
      if (!v.ok()) return v.status();
      const std::optional<ReportApi> api = ParseReportApi(*v);
      if (!api) {
        return Status::Error("audit: --report-api must be openreports.io/v1alpha1 or wgpolicyk8s.io/v1alpha2; got " +
                             Got(*v));
      }
      s.command.report_api = *api;
    } else if (arg == "--namespace" || arg == "-n") {
      Result<std::string> v = value();
      if (!v.ok()) return v.status();
      if (!IsDnsSubdomain(*v) || v->find('.') != std::string::npos) {
        return Status::Error("audit: --namespace must be a namespace name; got " + Got(*v));
      }
      s.command.audit_namespace = *v;
    } else if (std::ranges::find(AuditSharedFlags(), arg) != AuditSharedFlags().end()) {
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
  ray-webhook review (--mutate|--validate|--admit) [--cluster-domain DOMAIN] [spec flags] [FILE|-]
  ray-webhook audit [--output table|json|report] [--report-api API] [--cluster-domain DOMAIN] [spec flags] (FILE|-)...
  ray-webhook audit [--output table|json|report] [--report-api API] [--cluster-domain DOMAIN] [spec flags]
                    [--namespace NS] [--kube-* flags]
  ray-webhook --help | --version
)";
  const ServeSettings defaults;
  std::string_view section;
  for (const ServeFlag& f : ServeFlags()) {
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

review and audit take the spec flags (--kuberay-version, --kuberay-feature-gates,
--spec-rule-mode, --spec-rule) as serve does.

audit applies every rule to objects that exist: Pods and ray.io RayClusters,
RayJobs, RayServices and RayCronJobs read from FILEs (JSON or YAML, several documents, List
objects, e.g. kubectl get pods,rayclusters,rayjobs,rayservices,raycronjobs -A -o json) or,
without FILEs, listed from the Kubernetes API (the --kube-* flags of serve, or
in-cluster; --namespace for one namespace). Besides the rules of /mutate and
/validate it reports RayClusters with more than one live head Pod, worker Pods
of one group whose specs differ, Ray Pods the FQDN mutation would still
change, RayClusters kept running that nothing uses: a finished RayJob's
and a RayService upgrade's pending one (--audit-finished-job-grace,
--audit-pending-cluster-limit), and RayServices and RayJobs left suspended
though their spec asks for no suspension (--audit-suspended-limit), all
judged by the clock of the audit. It prints a table (or --output json, or --output report: one policy
report per namespace, openreports.io/v1alpha1 Reports or with --report-api
wgpolicyk8s.io/v1alpha2 PolicyReports, as a List for kubectl apply -f -) and
exits 0 when it found nothing, 1 when it found something, 2 on bad input or usage.

Endpoints: POST /mutate, POST /validate, POST /admit, GET /healthz, GET /readyz, GET /metrics.
)";
  return text;
}

}  // namespace ray_webhook
