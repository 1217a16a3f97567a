#include "cli/command_line.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace ray_webhook {
namespace {

Result<Command> Parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "ray-webhook");
  return ParseCommandLine(args, [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

TEST(CommandLine, ServeDefaults) {
  auto r = Parse({"serve", "--tls-cert", "c.pem", "--tls-key", "k.pem"});
  ASSERT_TRUE(r.ok()) << r.error();
  const ServerConfig& c = r->config;
  EXPECT_EQ(r->kind, CommandKind::kServe);
  EXPECT_EQ(c.bind_address, "0.0.0.0");
  EXPECT_EQ(c.port, 8443);
  EXPECT_EQ(c.policy.cluster_domain, "cluster.local");
  EXPECT_EQ(c.tls.cert_file, "c.pem");
  EXPECT_EQ(c.tls.key_file, "k.pem");
}

TEST(CommandLine, ServeEveryFlagBothForms) {
  auto r = Parse({"serve", "--bind=127.0.0.1", "--port", "9443", "--tls-cert=c", "--tls-key", "k", "--cluster-domain",
                  "app.pre", "--threads=8", "--log-level", "debug"});
  ASSERT_TRUE(r.ok()) << r.error();
  const ServerConfig& c = r->config;
  EXPECT_EQ(c.bind_address, "127.0.0.1");
  EXPECT_EQ(c.port, 9443);
  EXPECT_EQ(c.policy.cluster_domain, "app.pre");
  EXPECT_EQ(c.threads, 8);
  EXPECT_EQ(r->log_level, "debug");
}

// KubeRay's operator reads CLUSTER_DOMAIN (PR #951); the flag wins over it.
TEST(CommandLine, ClusterDomainFromEnvironmentFlagWins) {
  auto from_env = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"}, {{"CLUSTER_DOMAIN", "corp.example"}});
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->config.policy.cluster_domain, "corp.example");
  auto flag = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--cluster-domain", "x.y"},
                    {{"CLUSTER_DOMAIN", "corp.example"}});
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(flag->config.policy.cluster_domain, "x.y");
}

TEST(CommandLine, BadFlagsAreClearErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "no command"},
      {{"launch"}, "unknown command \"launch\""},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--bogus"}, "unknown flag --bogus"},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--port", "0"}, "--port must be a number from 1 to 65535"},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--port", "80x"}, "--port must be"},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--threads", "-1"}, "--threads must be"},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--log-level", "loud"}, "--log-level must be one of"},
      {{"serve", "--tls-cert", "c", "--tls-key", "k", "--cluster-domain", "Bad_Domain"}, "is not a DNS name"},
      {{"serve", "--tls-cert", "c", "--tls-key"}, "--tls-key needs a value"},
      {{"serve", "--tls-cert", "c"}, "--tls-cert and --tls-key (or --cert-dir) are required"},
      {{"serve", "--cert-dir", "d", "--tls-cert", "c"}, "not both"},
      {{"serve", "--cert-dir", "d", "--tls-min-version", "1.1"}, "--tls-min-version must be 1.2 or 1.3"},
      {{"serve", "--cert-dir", "d", "--drain-delay", "1h"}, "--drain-delay must be a duration"},
      {{"review"}, "give --mutate, --validate or --admit"},
      {{"review", "--mutate", "--validate"}, "give one of --mutate, --validate or --admit"},
      {{"review", "--mutate", "a.json", "b.json"}, "more than one input"},
      {{"review", "--frobnicate"}, "unknown flag --frobnicate"},
  };
  for (const auto& [args, fragment] : cases) {
    auto r = Parse(args);
    EXPECT_FALSE(r.ok()) << fragment;
    EXPECT_NE(r.error().find(fragment), std::string::npos) << "error: " << r.error();
  }
  auto bad_env = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"}, {{"CLUSTER_DOMAIN", "-bad-"}});
  EXPECT_NE(bad_env.error().find("from CLUSTER_DOMAIN"), std::string::npos) << bad_env.error();
}

TEST(CommandLine, HeadUniquenessAndRuleModes) {
  auto defaults = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"});
  ASSERT_TRUE(defaults.ok());
  const ServerConfig& d = defaults->config;
  EXPECT_TRUE(d.policy.head_uniqueness.name);
  EXPECT_TRUE(d.policy.head_uniqueness.lookup);
  EXPECT_EQ(d.policy.head_name_mode, RuleMode::kEnforce);
  EXPECT_FALSE(d.policy.deny_on_lookup_failure);
  EXPECT_FALSE(d.kube_api.configured());
  EXPECT_EQ(d.kube_api.timeout, std::chrono::milliseconds(2000));

  auto r = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--head-uniqueness", "lookup", "--head-name-mode=warn",
                  "--second-head-mode", "off", "--duplicate-mount-mode", "warn", "--head-lookup-failure", "deny",
                  "--kube-api-timeout", "500ms"});
  ASSERT_TRUE(r.ok()) << r.error();
  const ServerConfig& c = r->config;
  EXPECT_FALSE(c.policy.head_uniqueness.name);
  EXPECT_TRUE(c.policy.head_uniqueness.lookup);
  EXPECT_EQ(c.policy.head_name_mode, RuleMode::kWarn);
  EXPECT_EQ(c.policy.second_head_mode, RuleMode::kOff);
  EXPECT_EQ(c.policy.duplicate_mount_mode, RuleMode::kWarn);
  EXPECT_TRUE(c.policy.deny_on_lookup_failure);
  EXPECT_EQ(c.kube_api.timeout, std::chrono::milliseconds(500));
  auto off = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--head-uniqueness=off"});
  EXPECT_FALSE(off->config.policy.head_uniqueness.name || off->config.policy.head_uniqueness.lookup);
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--head-uniqueness", "both"},
                                                        {"--head-name-mode", "strict"},
                                                        {"--head-lookup-failure", "maybe"},
                                                        {"--kube-api-timeout", "forever"},
                                                        {"--kube-api-timeout", "120s"},
                                                        {"--kube-api-server", "http://x"}}) {
    EXPECT_FALSE(Parse({"serve", "--tls-cert", "c", "--tls-key", "k", flag, value}).ok()) << flag << " " << value;
  }
}

TEST(CommandLine, HardeningFlags) {
  auto dir = Parse({"serve", "--cert-dir", "/certs/"});
  ASSERT_TRUE(dir.ok()) << dir.error();
  EXPECT_EQ(dir->config.tls.cert_file, "/certs/tls.crt");
  EXPECT_EQ(dir->config.tls.key_file, "/certs/tls.key");
  const ServerConfig& d = dir->config;
  EXPECT_EQ(d.tls.min_version, 12);
  EXPECT_EQ(d.drain_delay, std::chrono::seconds(5));
  EXPECT_EQ(d.max_body_bytes, 7u * 1024 * 1024);
  auto r = Parse({"serve",  "--cert-dir",        "/c",    "--client-ca",
                  "ca.pem", "--tls-min-version", "1.3",   "--threads",
                  "4",      "--max-connections", "100",   "--idle-timeout",
                  "1m",     "--request-timeout", "3s",    "--drain-delay",
                  "0",      "--shutdown-grace",  "500ms", "--cert-reload-interval",
                  "1s"});
  ASSERT_TRUE(r.ok()) << r.error();
  const ServerConfig& c = r->config;
  EXPECT_EQ(c.tls.client_ca_file, "ca.pem");
  EXPECT_EQ(c.tls.min_version, 13);
  EXPECT_EQ(c.max_connections, 100);
  EXPECT_EQ(c.idle_timeout, std::chrono::minutes(1));
  EXPECT_EQ(c.request_timeout, std::chrono::seconds(3));
  EXPECT_EQ(c.drain_delay, std::chrono::milliseconds(0));
  EXPECT_EQ(c.shutdown_grace, std::chrono::milliseconds(500));
  EXPECT_EQ(c.tls.reload_interval, std::chrono::seconds(1));
  EXPECT_EQ(d.busy_poll, std::chrono::microseconds(100));
  for (const auto& [value, expected] :
       std::vector<std::pair<std::string, std::chrono::microseconds>>{{"0", std::chrono::microseconds(0)},
                                                                      {"20us", std::chrono::microseconds(20)},
                                                                      {"1ms", std::chrono::microseconds(1000)}}) {
    auto p = Parse({"serve", "--cert-dir", "/c", "--busy-poll", value});
    ASSERT_TRUE(p.ok()) << value << ": " << p.error();
    EXPECT_EQ(p->config.busy_poll, expected) << value;
  }
  for (const std::string value : {"2ms", "1s", "-5us", "fast"}) {
    EXPECT_FALSE(Parse({"serve", "--cert-dir", "/c", "--busy-poll", value}).ok()) << value;
  }
  // Below a millisecond is not a timeout.
  EXPECT_FALSE(Parse({"serve", "--cert-dir", "/c", "--request-timeout", "500us"}).ok());
  // Connections and the workers for waiting reviews are bounded apart.
  auto apart = Parse({"serve", "--cert-dir", "/c", "--threads", "200", "--max-connections", "100"});
  EXPECT_EQ(apart->config.max_connections, 100);
  EXPECT_EQ(apart->config.threads, 200);
}

TEST(CommandLine, ProbePortAndKubeApiUrls) {
  EXPECT_EQ(Parse({"serve", "--cert-dir", "/c"})->config.probe_port, 8081);
  EXPECT_EQ(Parse({"serve", "--cert-dir", "/c", "--probe-port", "0"})->config.probe_port, 0);
  EXPECT_FALSE(Parse({"serve", "--cert-dir", "/c", "--probe-port", "8443"}).ok()) << "the webhook's own port";
  EXPECT_FALSE(Parse({"serve", "--cert-dir", "/c", "--probe-port", "70000"}).ok());
  auto v6 = Parse({"serve", "--cert-dir", "/c", "--kube-api-server", "https://[fd00:abcd::1]:6443"});
  ASSERT_TRUE(v6.ok()) << v6.error();
  EXPECT_EQ(v6->config.kube_api.server, "https://[fd00:abcd::1]:6443");
  EXPECT_FALSE(Parse({"serve", "--cert-dir", "/c", "--kube-api-server", "https://[fd00::1"}).ok());
}

// client-go's rest.InClusterConfig: service host and port, service-account token and CA.
TEST(CommandLine, InClusterApiFromEnvironment) {
  auto r = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"},
                 {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  ASSERT_TRUE(r.ok());
  const KubeApiConfig& api = r->config.kube_api;
  EXPECT_EQ(api.server, "https://10.96.0.1:443");
  EXPECT_EQ(api.token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  EXPECT_EQ(api.ca_file, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
  auto v6 = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"},
                  {{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  EXPECT_EQ(v6->config.kube_api.server, "https://[fd00::1]:443");
  auto flags = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--kube-api-server", "https://127.0.0.1:6443",
                      "--kube-token-file", "t", "--kube-ca-file", "ca"},
                     {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  EXPECT_EQ(flags->config.kube_api.server, "https://127.0.0.1:6443");
  EXPECT_EQ(flags->config.kube_api.token_file, "t");
  EXPECT_EQ(flags->config.kube_api.ca_file, "ca");
}

TEST(CommandLine, ReviewHelpVersion) {
  auto r = Parse({"review", "--validate", "in.json"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->kind, CommandKind::kReview);
  EXPECT_EQ(r->endpoint, Endpoint::kValidate);
  EXPECT_EQ(r->input, "in.json");
  EXPECT_EQ(Parse({"review", "--admit", "in.json"})->endpoint, Endpoint::kAdmit);
  auto stdin_review = Parse({"review", "--mutate"});
  ASSERT_TRUE(stdin_review.ok());
  EXPECT_EQ(stdin_review->input, "-");
  EXPECT_EQ(Parse({"--help"})->kind, CommandKind::kHelp);
  EXPECT_EQ(Parse({"--version"})->kind, CommandKind::kVersion);
  EXPECT_NE(UsageText().find("--cluster-domain"), std::string::npos);
}

TEST(CommandLine, AuditFiles) {
  auto r = Parse({"audit", "--output", "json", "a.json", "-", "--cluster-domain=example.internal", "b.yaml"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->kind, CommandKind::kAudit);
  EXPECT_EQ(r->audit_inputs, (std::vector<std::string>{"a.json", "-", "b.yaml"}));
  EXPECT_EQ(r->audit_output, AuditOutput::kJson);
  EXPECT_EQ(r->config.policy.cluster_domain, "example.internal");
  auto reports = Parse({"audit", "-o", "report", "--report-api", "wgpolicyk8s.io/v1alpha2", "a.json"});
  ASSERT_TRUE(reports.ok()) << reports.error();
  EXPECT_EQ(reports->audit_output, AuditOutput::kReport);
  EXPECT_EQ(reports->report_api, ReportApi::kWgPolicy);
  EXPECT_EQ(Parse({"audit", "-o", "report", "a.json"})->report_api, ReportApi::kOpenReports);
  // Files win over an in-cluster environment.
  auto in_cluster =
      Parse({"audit", "x.yaml"}, {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  ASSERT_TRUE(in_cluster.ok()) << in_cluster.error();
  EXPECT_FALSE(in_cluster->config.kube_api.configured());
}

TEST(CommandLine, AuditTheApiWithTheFlagsOfServe) {
  auto r = Parse({"audit", "--kube-api-server", "https://127.0.0.1:6443", "--kube-token-file=t", "--kube-ca-file", "ca",
                  "--kube-api-timeout", "45s", "-n", "team-a"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->audit_inputs.empty());
  EXPECT_EQ(r->config.kube_api.server, "https://127.0.0.1:6443");
  EXPECT_EQ(r->config.kube_api.token_file, "t");
  EXPECT_EQ(r->config.kube_api.ca_file, "ca");
  EXPECT_EQ(r->config.kube_api.timeout, std::chrono::seconds(45));
  EXPECT_EQ(r->audit_namespace, "team-a");
  EXPECT_EQ(r->audit_output, AuditOutput::kTable);
  auto in_cluster = Parse({"audit"}, {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  ASSERT_TRUE(in_cluster.ok()) << in_cluster.error();
  EXPECT_EQ(in_cluster->config.kube_api.server, "https://10.96.0.1:443");
  EXPECT_EQ(in_cluster->config.kube_api.token_file, kServiceAccountTokenFile);
  EXPECT_EQ(in_cluster->config.kube_api.timeout, std::chrono::seconds(30));
}

TEST(CommandLine, AuditUsageErrors) {
  EXPECT_EQ(Parse({"audit"}).error(),
            "audit: nothing to read: give files (or - for stdin), or --kube-api-server (or run in a cluster)");
  EXPECT_EQ(Parse({"audit", "-o", "yaml", "x"}).error(), "audit: --output must be table, json or report; got \"yaml\"");
  EXPECT_EQ(
      Parse({"audit", "-o", "report", "--report-api", "wgpolicyk8s.io/v1beta1", "x"}).error(),
      "audit: --report-api must be openreports.io/v1alpha1 or wgpolicyk8s.io/v1alpha2; got \"wgpolicyk8s.io/v1beta1\"");
  EXPECT_EQ(Parse({"audit", "x", "--kube-api-server", "https://h"}).error(),
            "audit: give files or the Kubernetes API flags, not both");
  EXPECT_EQ(Parse({"audit", "--port", "1"}).error(), "audit: unknown flag --port");
  EXPECT_EQ(Parse({"audit", "--namespace"}).error(), "audit: --namespace needs a value");
  EXPECT_EQ(Parse({"audit", "-n", "a.b", "--kube-api-server", "https://h"}).error(),
            "audit: --namespace must be a namespace name; got \"a.b\"");
  EXPECT_EQ(Parse({"audit", "-n", "a", "x.yaml"}).error(),
            "audit: --namespace selects what is listed from the API; it does not filter files");
  EXPECT_FALSE(Parse({"audit", "--kube-api-server", "http://h"}).ok());
}

TEST(CommandLine, AuditInterval) {
  auto off = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"});
  ASSERT_TRUE(off.ok()) << off.error();
  EXPECT_EQ(off->config.audit_interval.count(), 0);
  auto on = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--audit-interval", "5m", "--kube-api-server",
                   "https://127.0.0.1:6443"});
  ASSERT_TRUE(on.ok()) << on.error();
  EXPECT_EQ(on->config.audit_interval, std::chrono::minutes(5));
  // Without an API the server refuses to start (WebhookServer::Bind); the in-cluster environment is only
  // there in the Pod, so the command line cannot tell.
  EXPECT_TRUE(Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--audit-interval", "5m"}).ok());
  EXPECT_EQ(Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--audit-interval", "off"})->config.audit_interval,
            std::chrono::milliseconds(0));
  EXPECT_FALSE(Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--audit-interval", "500ms", "--kube-api-server",
                      "https://h"})
                   .ok());
}

}  // namespace
}  // namespace ray_webhook

namespace ray_webhook {
namespace {

// docs/flags.md's table and the flag table agree: every
// flag is documented with its argument, and its documented default starts
// with the one --help prints from a default configuration.
TEST(CommandLine, FlagReferenceDocumentsEveryFlagWithItsDefault) {
  std::ifstream in(RAY_WEBHOOK_FLAGS_DOC);
  ASSERT_TRUE(in) << RAY_WEBHOOK_FLAGS_DOC;
  std::map<std::string, std::pair<std::string, std::string>> rows;  // flag -> argument, default
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| `--")) continue;
    std::vector<std::string> cells;
    for (std::size_t from = 1, bar; (bar = line.find(" |", from)) != std::string::npos; from = bar + 2) {
      std::string cell = line.substr(from, bar - from);
      std::erase(cell, '`');
      const std::size_t first = cell.find_first_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first));
    }
    if (cells.size() < 2) continue;
    const std::size_t space = cells[0].find(' ');
    rows[cells[0].substr(0, space)] = {space == std::string::npos ? "" : cells[0].substr(space + 1), cells[1]};
  }
  const ServeSettings defaults;
  for (const ServeFlag& flag : ServeFlags()) {
    const auto row = rows.find(std::string(flag.name));
    ASSERT_NE(row, rows.end()) << flag.name << " is not in docs/flags.md's table";
    EXPECT_EQ(row->second.first, flag.argument) << flag.name;
    const std::string shown = flag.shown(defaults);
    if (!shown.empty()) {
      EXPECT_TRUE(row->second.second.starts_with(shown))
          << flag.name << ": docs/flags.md says \"" << row->second.second << "\", --help \"" << shown << "\"";
    }
  }
  EXPECT_EQ(rows.size(), ServeFlags().size()) << "docs/flags.md documents a flag the command line does not know";
}

}  // namespace
}  // namespace ray_webhook

namespace ray_webhook {
namespace {

TEST(CommandLine, KubeRaySpecFlags) {
  auto defaults = Parse({"serve", "--cert-dir", "/c"});
  ASSERT_TRUE(defaults.ok()) << defaults.error();
  EXPECT_EQ(defaults->config.policy.kuberay.version, (KubeRayVersion{1, 6, 2}));
  EXPECT_EQ(defaults->config.policy.spec_mode, RuleMode::kEnforce);
  auto r = Parse({"serve", "--cert-dir", "/c", "--kuberay-version", "v1.7.0", "--kuberay-feature-gates",
                  "RayClusterMTLS=true,RayCronJob=false", "--spec-rule-mode=warn"});
  ASSERT_TRUE(r.ok()) << r.error();
  const PolicyConfig& p = r->config.policy;
  EXPECT_EQ(p.kuberay.version, (KubeRayVersion{1, 7, 0}));
  EXPECT_TRUE(p.kuberay.GateEnabled("RayClusterMTLS"));
  EXPECT_FALSE(p.kuberay.GateEnabled("RayCronJob"));
  EXPECT_EQ(p.spec_mode, RuleMode::kWarn);
  for (const auto& [args, error] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--kuberay-version", "1.7"}, "--kuberay-version must be the KubeRay operator's release"},
           {{"--kuberay-feature-gates", "RayClusterMTLS"}, "--kuberay-feature-gates: "},
           {{"--spec-rule-mode", "strict"}, "--spec-rule-mode must be enforce, warn or off; got \"strict\""},
           {{"--spec-rule", "no-such-rule=warn"}, "--spec-rule: no spec rule \"no-such-rule\""},
           {{"--spec-rule", "some-rule"}, "--spec-rule must be ID=MODE"},
           {{"--spec-rule", "some-rule=loud"}, "the mode must be enforce, warn or off"},
       }) {
    std::vector<std::string> full = {"serve", "--cert-dir", "/c"};
    full.insert(full.end(), args.begin(), args.end());
    auto bad = Parse(full);
    ASSERT_FALSE(bad.ok()) << args[0] << " " << args[1];
    EXPECT_NE(bad.error().find(error), std::string::npos) << bad.error();
  }
}

TEST(CommandLine, ReviewAndAuditTakeTheSpecFlags) {
  auto review = Parse({"review", "--validate", "--kuberay-version", "0.3.0", "--spec-rule-mode", "off", "-"});
  ASSERT_TRUE(review.ok()) << review.error();
  EXPECT_EQ(review->config.policy.kuberay.version, (KubeRayVersion{0, 3, 0}));
  EXPECT_EQ(review->config.policy.spec_mode, RuleMode::kOff);
  EXPECT_FALSE(Parse({"review", "--validate", "--kuberay-version", "x", "-"}).ok());
  auto audit = Parse({"audit", "--kuberay-version=1.5.1", "--kuberay-feature-gates", "RayJobDeletionPolicy=true", "f"});
  ASSERT_TRUE(audit.ok()) << audit.error();
  EXPECT_EQ(audit->config.policy.kuberay.version, (KubeRayVersion{1, 5, 1}));
  EXPECT_TRUE(audit->config.policy.kuberay.GateEnabled("RayJobDeletionPolicy"));
}

}  // namespace
}  // namespace ray_webhook
