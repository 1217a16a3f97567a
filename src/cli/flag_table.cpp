#include "flag_table.h"

#include <chrono>
#include <vector>

#include "cost_leak_flags.h"
#include "flag_values.h"
#include "ray_webhook/core/pod/dns_name.h"
#include "ray_webhook/kube/https_get.h"
#include "spec_flags.h"

namespace ray_webhook {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

std::string ShowHeadUniqueness(HeadUniqueness h) {
  return h.name && h.lookup ? "name+lookup" : h.name ? "name" : h.lookup ? "lookup" : "off";
}

constexpr std::string_view kServeSection = "serve flags";
constexpr std::string_view kHeadSection = "head uniqueness (one head Pod per RayCluster)";
constexpr std::string_view kRulesSection = "other rules";
constexpr std::string_view kSpecSection = "KubeRay's spec checks (docs/rules.md)";
constexpr std::string_view kAuditSection = kAuditFlagSection;

ServerConfig& Server(ServeSettings& s) { return s.command.config; }
const ServerConfig& Server(const ServeSettings& s) { return s.command.config; }
std::string None(const ServeSettings&) { return ""; }

// The flags of `serve`, in the order the usage lists them.
const ServeFlag kServeFlags[] = {
    {"--bind", "ADDR", kServeSection, "address to listen on", "address to listen on",
     [](ServeSettings& s, std::string_view v) {
       Server(s).bind_address = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings& s) { return Server(s).bind_address; }},
    {"--port", "N", kServeSection, "HTTPS port", "HTTPS port",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--port", v, 1, 65535, &Server(s).port); },
     [](const ServeSettings& s) { return std::to_string(Server(s).port); }},
    {"--probe-port", "N", kServeSection,
     "plain-HTTP port for /healthz and /readyz only, for kubelet probes; 0 turns it off",
     "plain-HTTP port serving only `/healthz` and `/readyz`, for kubelet probes (which present no client certificate); "
     "`0` turns it off",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--probe-port", v, 0, 65535, &Server(s).probe_port); },
     [](const ServeSettings& s) { return std::to_string(Server(s).probe_port); }},
    {"--tls-cert", "FILE", kServeSection, "serving certificate, PEM (reloaded when the file changes)",
     "serving certificate (PEM, leaf first, then any intermediates); its SANs must name the Service. Reloaded without "
     "a restart when the file changes. Required, unless `--cert-dir` is given",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.cert_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--tls-key", "FILE", kServeSection, "private key of the serving certificate, PEM",
     "its private key (PEM); required, unless `--cert-dir` is given",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.key_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--cert-dir", "DIR", kServeSection, "DIR/tls.crt and DIR/tls.key instead (controller-runtime's layout)",
     "`DIR/tls.crt` and `DIR/tls.key` instead of the two flags (controller-runtime's layout, a mounted Secret)",
     [](ServeSettings& s, std::string_view v) {
       s.cert_dir = std::string(v);
       return Status::Ok();
     },
     None},
    {"--cert-reload-interval", "D", kServeSection, "how often the certificate files are checked for new bytes",
     "how often the certificate files are checked for new bytes",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--cert-reload-interval", v, milliseconds(1), std::chrono::minutes(10),
                           "5s or 500ms, at most 10m", &Server(s).tls.reload_interval);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).tls.reload_interval); }},
    {"--client-ca", "FILE", kServeSection, "require client certificates signed by this CA (API server authentication)",
     "require a client certificate signed by this CA (an API server configured with an AdmissionConfiguration "
     "kubeconfig presents one)",
     [](ServeSettings& s, std::string_view v) {
       Server(s).tls.client_ca_file = std::string(v);
       return Status::Ok();
     },
     None},
    {"--tls-min-version", "V", kServeSection, "1.2 or 1.3",
     "`1.2` or `1.3`. TLS 1.2 offers only ECDHE key exchange with AES-GCM or ChaCha20-Poly1305",
     [](ServeSettings& s, std::string_view v) {
       if (v != "1.2" && v != "1.3") return Status::Error("--tls-min-version must be 1.2 or 1.3; got " + Got(v));
       Server(s).tls.min_version = v == "1.3" ? 13 : 12;
       return Status::Ok();
     },
     [](const ServeSettings& s) { return std::string(Server(s).tls.min_version == 13 ? "1.3" : "1.2"); }},
    {"--cluster-domain", "DOMAIN", kServeSection, "cluster DNS domain for FQ_RAY_IP; must match the KubeRay operator's",
     "DNS domain used in `FQ_RAY_IP`. It must match the KubeRay operator's `CLUSTER_DOMAIN`; the environment variable "
     "is read the same way the operator reads it, and the flag wins over it",
     [](ServeSettings& s, std::string_view v) {
       s.cluster_domain = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings& s) { return "$CLUSTER_DOMAIN, else " + Server(s).policy.cluster_domain; }},
    {"--threads", "N", kServeSection, "workers for reviews that wait on the Kubernetes API, started on demand",
     "workers for reviews that wait on the Kubernetes API (the second-head lookup), started on demand; every other "
     "request is answered on the event loop that read it",
     [](ServeSettings& s, std::string_view v) { return IntFlag("--threads", v, 1, 4096, &Server(s).threads); },
     [](const ServeSettings& s) { return std::to_string(Server(s).threads); }},
    {"--max-connections", "N", kServeSection,
     "connections open at once; beyond it a new one closes the oldest idle one",
     "connections open at once (lowered to the open-file limit less 64 when that is smaller); a new connection beyond "
     "it closes the oldest idle connection, or is closed at once when none is idle",
     [](ServeSettings& s, std::string_view v) {
       return IntFlag("--max-connections", v, 1, 65536, &Server(s).max_connections);
     },
     [](const ServeSettings& s) { return std::to_string(Server(s).max_connections); }},
    {"--idle-timeout", "D", kServeSection, "keep-alive wait between requests", "keep-alive wait between requests",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--idle-timeout", v, milliseconds(1), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).idle_timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).idle_timeout); }},
    {"--request-timeout", "D", kServeSection, "deadline to read and answer one request; slower clients are cut off",
     "deadline from a TLS handshake's or a request's first byte to the end of its answer (plus `--kube-api-timeout` "
     "when a lookup runs); a slower client is cut off",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--request-timeout", v, milliseconds(1), std::chrono::minutes(10),
                           "5s or 500ms, at most 10m", &Server(s).request_timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).request_timeout); }},
    {"--busy-poll", "D", kServeSection,
     "after a short wait, poll this long for the next request before sleeping; 0 turns it off",
     "after a short wait that found one connection ready, an event loop polls this long for the next request before it "
     "sleeps ([Operations](operations.md#busy-polling)); `0` turns it off, at most `1ms`",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--busy-poll", v, microseconds(0), milliseconds(1), "50us or 0, at most 1ms",
                           &Server(s).busy_poll);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).busy_poll); }},
    {"--drain-delay", "D", kServeSection, "after SIGTERM, /readyz is 503 and new connections are still accepted for D",
     "after SIGTERM: `/readyz` answers 503, every answer carries `Connection: close`, and new connections are still "
     "accepted for D",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--drain-delay", v, milliseconds(0), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).drain_delay);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).drain_delay); }},
    {"--shutdown-grace", "D", kServeSection, "then in-flight requests finish; exit within D",
     "then: requests that have arrived are answered, idle connections close once nothing is pending on them; the "
     "process exits 0 within D",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--shutdown-grace", v, milliseconds(1), std::chrono::minutes(10), "5s or 500ms, at most 10m",
                           &Server(s).shutdown_grace);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).shutdown_grace); }},
    {"--log-level", "LEVEL", kServeSection, "trace, debug, info, warn, error, critical or off",
     "`trace`, `debug`, `info`, `warn`, `error`, `critical` or `off`",
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
     "`name` (deterministic head name and the head-name rule), `lookup` (the second-head lookup), both, or `off`",
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
     "the head-name rule: `enforce`, `warn` (allow with a warning) or `off`",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--head-name-mode", v, &Server(s).policy.head_name_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.head_name_mode); }},
    {"--second-head-mode", "M", kHeadSection, "the second-head lookup: enforce, warn or off",
     "the second-head lookup: `enforce`, `warn` or `off`",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--second-head-mode", v, &Server(s).policy.second_head_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.second_head_mode); }},
    {"--head-lookup-failure", "A", kHeadSection, "when the API cannot answer: allow (with a warning) or deny",
     "when the API cannot answer the lookup: `allow` with a warning, or `deny` (503)",
     [](ServeSettings& s, std::string_view v) {
       if (v != "allow" && v != "deny") {
         return Status::Error("--head-lookup-failure must be allow or deny; got " + Got(v));
       }
       Server(s).policy.deny_on_lookup_failure = v == "deny";
       return Status::Ok();
     },
     [](const ServeSettings& s) { return std::string(Server(s).policy.deny_on_lookup_failure ? "deny" : "allow"); }},
    {"--kube-api-server", "URL", kHeadSection, "Kubernetes API",
     "Kubernetes API for the lookup: `https://HOST[:PORT]`, an IPv6 address in brackets (TLS is always verified, "
     "against the name or IP address)",
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
     "bearer token (by default the service account's token); re-read whenever the file changes, since bound tokens "
     "rotate",
     [](ServeSettings& s, std::string_view v) {
       s.token_file = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("the service account's"); }},
    {"--kube-ca-file", "FILE", kHeadSection, "CA of the API server",
     "CA bundle of the API server (by default the service account's `ca.crt`)",
     [](ServeSettings& s, std::string_view v) {
       s.ca_file = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("the service account's"); }},
    {"--kube-api-timeout", "D", kHeadSection, "lookup timeout",
     "bound on the whole lookup, from connect to the last byte (`500ms`, `2s`, at most `60s`); kube-apiserver's own "
     "`?timeout=` lowers it ([Operations](operations.md#the-lookups-deadline))",
     [](ServeSettings& s, std::string_view v) {
       return DurationFlag("--kube-api-timeout", v, milliseconds(1), std::chrono::seconds(60),
                           "2s or 500ms, at most 60s", &Server(s).kube_api.timeout);
     },
     [](const ServeSettings& s) { return ShowDuration(Server(s).kube_api.timeout); }},

    {"--duplicate-mount-mode", "M", kRulesSection, "enforce, warn or off",
     "the duplicate-mount rule: `enforce`, `warn` or `off`",
     [](ServeSettings& s, std::string_view v) {
       return RuleModeFlag("--duplicate-mount-mode", v, &Server(s).policy.duplicate_mount_mode);
     },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.duplicate_mount_mode); }},

    {"--kuberay-version", "X.Y.Z", kSpecSection,
     "the KubeRay operator's release, whose spec checks run; serve also takes auto (from the operator's Deployment)",
     "the KubeRay operator's release (`1.6.2`, `v1.7.0`): the spec checks that release makes run, and no others "
     "([rules.md](rules.md#kuberays-spec-checks)). `serve` also takes `auto`: the release and `--feature-gates` "
     "read from the operator's Deployment and followed while serving, falling back to the release given after it "
     "(`auto:1.5.1`; `auto` alone: the default) when that cannot be told "
     "([operations.md](operations.md#the-kuberay-release))",
     [](ServeSettings& s, std::string_view v) {
       const bool serve = s.command.kind == CommandKind::kServe;
       return KubeRayVersionFlag(v, Server(s).policy, serve ? &Server(s).kuberay_auto : nullptr);
     },
     [](const ServeSettings& s) { return ShowKubeRayVersion(Server(s).policy.kuberay.version); }},
    {"--kuberay-operator-namespace", "NS", kSpecSection,
     "with --kuberay-version auto, the namespace of the operator's Deployment (default: every namespace)",
     "with `--kuberay-version auto`, the namespace of the operator's Deployment; by default every namespace is "
     "watched, which needs a ClusterRole",
     [](ServeSettings& s, std::string_view v) {
       // A namespace's name is an RFC 1123 label: a subdomain of one part, at most 63 characters.
       if (v.size() > 63 || v.find('.') != std::string_view::npos || !IsDnsSubdomain(v))
         return Status::Error("--kuberay-operator-namespace must be a namespace name; got " + Got(v));
       Server(s).kuberay_operator_namespace = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings&) { return std::string("every namespace"); }},
    {"--kuberay-operator-selector", "SEL", kSpecSection,
     "with --kuberay-version auto, the label selector of the operator's Deployment",
     "with `--kuberay-version auto`, the label selector that finds the operator's Deployment (the Helm chart's and "
     "the kustomize manifests' labels by default)",
     [](ServeSettings& s, std::string_view v) {
       if (v.empty()) return Status::Error("--kuberay-operator-selector must not be empty");
       Server(s).kuberay_operator_selector = std::string(v);
       return Status::Ok();
     },
     [](const ServeSettings& s) { return Server(s).kuberay_operator_selector; }},
    {"--kuberay-feature-gates", "G", kSpecSection, "the operator's --feature-gates, e.g. RayClusterMTLS=true",
     "the operator's own `--feature-gates` (`A=true,B=false`); a gate not named takes that release's default",
     [](ServeSettings& s, std::string_view v) { return KubeRayFeatureGatesFlag(v, Server(s).policy); },
     [](const ServeSettings&) { return std::string("the release's defaults"); }},
    {"--spec-rule-mode", "M", kSpecSection, "every spec check: enforce, warn or off",
     "every spec check: `enforce` (deny, 422), `warn` (allow with a warning) or `off`",
     [](ServeSettings& s, std::string_view v) { return SpecRuleModeFlag(v, Server(s).policy); },
     [](const ServeSettings& s) { return ShowRuleMode(Server(s).policy.spec_mode); }},
    {"--spec-rule", "ID=MODE", kSpecSection, "one spec check's mode, over --spec-rule-mode; repeatable",
     "one spec check's mode, which wins over `--spec-rule-mode`; repeatable. `ID` is a rule id of "
     "[rules.md](rules.md#kuberays-spec-checks)",
     [](ServeSettings& s, std::string_view v) { return SpecRuleFlag(v, Server(s).policy); }, None},

    {"--audit-interval", "D", kAuditSection,
     "audit the cluster's Ray Pods and objects in the background, into the audit gauges of /metrics: judged on "
     "every change and at least every D (--audit-mode watch), or listed every D (list); off or 0 turns it off",
     "audit the cluster's Ray Pods, RayClusters, RayJobs and RayServices on background threads and export the "
     "results as gauges on `/metrics` ([audit.md](audit.md#in-the-server)): with `--audit-mode watch` judged within "
     "a second of each change and at least every D, with `list` listed again every D (`5m`, `30s`, from `1s` to "
     "`1440m`); needs the Kubernetes API and the RBAC of `deploy/overlays/audit`; `off` or `0` turns it off",
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
    {"--audit-mode", "M", kAuditSection,
     "with --audit-interval: watch (list once, then watch every change) or list (list everything every D)",
     "with `--audit-interval`: `watch` (the default) lists the Ray Pods and ray.io objects once and then watches "
     "them, keeping a few fields of each, so a finding appears or clears within seconds of its cause and an "
     "unchanged cluster costs the API server nothing; `list` lists them all again every interval, page by page "
     "([audit.md](audit.md#in-the-server))",
     [](ServeSettings& s, std::string_view v) {
       if (v == "watch" || v == "list") {
         Server(s).audit_watch = v == "watch";
         return Status::Ok();
       }
       return Status::Error("--audit-mode must be watch or list; got " + Got(v));
     },
     [](const ServeSettings& s) { return std::string(Server(s).audit_watch ? "watch" : "list"); }},
    {"--audit-reports", "API", kAuditSection,
     "with --audit-interval, also write the findings as policy reports, one per namespace: "
     "openreports.io/v1alpha1 (Report), wgpolicyk8s.io/v1alpha2 (PolicyReport) or off",
     "with `--audit-interval`, also write the findings as policy reports, one per namespace with findings, updated in "
     "place each run and deleted once its findings are gone: `openreports.io/v1alpha1` (Report), "
     "`wgpolicyk8s.io/v1alpha2` (PolicyReport) or `off` ([audit.md](audit.md#policy-reports)); needs the kind's "
     "CustomResourceDefinition and the RBAC of `deploy/overlays/audit`",
     [](ServeSettings& s, std::string_view v) {
       if (v == "off") {
         Server(s).audit_reports.reset();
         return Status::Ok();
       }
       const std::optional<ReportApi> api = ParseReportApi(v);
       if (!api) {
         return Status::Error("--audit-reports must be openreports.io/v1alpha1, wgpolicyk8s.io/v1alpha2 or off; got " +
                              Got(v));
       }
       Server(s).audit_reports = *api;
       return Status::Ok();
     },
     [](const ServeSettings& s) {
       if (!Server(s).audit_reports) return std::string("off");
       const ReportApiInfo info = ReportApiOf(*Server(s).audit_reports);
       return std::string(info.group) + "/" + std::string(info.version);
     }},
};

// The flags of serve that audit takes too: the API, the cluster domain, the spec checks and the
// cost-leak limits.
constexpr std::string_view kAuditSharedFlags[] = {"--kube-api-server",
                                                  "--kube-token-file",
                                                  "--kube-ca-file",
                                                  "--kube-api-timeout",
                                                  "--cluster-domain",
                                                  "--kuberay-version",
                                                  "--kuberay-feature-gates",
                                                  "--spec-rule-mode",
                                                  "--spec-rule",
                                                  "--audit-finished-job-grace",
                                                  "--audit-pending-cluster-limit",
                                                  "--audit-suspended-limit"};

}  // namespace

std::span<const ServeFlag> ServeFlags() {
  // The cost-leak limits last, where the audit's section ends.
  static const std::vector<ServeFlag> all = [] {
    std::vector<ServeFlag> flags(std::begin(kServeFlags), std::end(kServeFlags));
    for (const ServeFlag& f : CostLeakFlags()) flags.push_back(f);
    return flags;
  }();
  return all;
}

const ServeFlag* FindServeFlag(std::string_view name) {
  for (const ServeFlag& f : ServeFlags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::span<const std::string_view> AuditSharedFlags() { return kAuditSharedFlags; }

}  // namespace ray_webhook
