#include "ray_webhook/command_line.h"

#include <gtest/gtest.h>

#include <map>

namespace ray_webhook {
namespace {

ParseResult Parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "ray-webhook");
  return ParseCommandLine(args, [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

TEST(CommandLine, ServeDefaults) {
  auto r = Parse({"serve", "--tls-cert", "c.pem", "--tls-key", "k.pem"});
  ASSERT_TRUE(r.command) << r.error;
  const Config& c = r.command->config;
  EXPECT_EQ(r.command->kind, CommandKind::kServe);
  EXPECT_EQ(c.bind_address, "0.0.0.0");
  EXPECT_EQ(c.port, 8443);
  EXPECT_EQ(c.cluster_domain, "cluster.local");
  EXPECT_EQ(c.tls_cert_file, "c.pem");
  EXPECT_EQ(c.tls_key_file, "k.pem");
}

TEST(CommandLine, ServeEveryFlagBothForms) {
  auto r = Parse({"serve", "--bind=127.0.0.1", "--port", "9443", "--tls-cert=c", "--tls-key", "k",
                  "--cluster-domain", "app.pre", "--threads=8", "--log-level", "debug"});
  ASSERT_TRUE(r.command) << r.error;
  const Config& c = r.command->config;
  EXPECT_EQ(c.bind_address, "127.0.0.1");
  EXPECT_EQ(c.port, 9443);
  EXPECT_EQ(c.cluster_domain, "app.pre");
  EXPECT_EQ(c.threads, 8);
  EXPECT_EQ(c.log_level, "debug");
}

// KubeRay's operator reads CLUSTER_DOMAIN (PR #951); the flag wins over it.
TEST(CommandLine, ClusterDomainFromEnvironmentFlagWins) {
  auto from_env = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"}, {{"CLUSTER_DOMAIN", "corp.example"}});
  ASSERT_TRUE(from_env.command);
  EXPECT_EQ(from_env.command->config.cluster_domain, "corp.example");
  auto flag = Parse({"serve", "--tls-cert", "c", "--tls-key", "k", "--cluster-domain", "x.y"},
                    {{"CLUSTER_DOMAIN", "corp.example"}});
  ASSERT_TRUE(flag.command);
  EXPECT_EQ(flag.command->config.cluster_domain, "x.y");
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
      {{"serve", "--tls-cert", "c"}, "--tls-cert and --tls-key are required"},
      {{"review"}, "give --mutate or --validate"},
      {{"review", "--mutate", "--validate"}, "not both"},
      {{"review", "--mutate", "a.json", "b.json"}, "more than one input"},
      {{"review", "--frobnicate"}, "unknown flag --frobnicate"},
  };
  for (const auto& [args, fragment] : cases) {
    auto r = Parse(args);
    EXPECT_FALSE(r.command) << fragment;
    EXPECT_NE(r.error.find(fragment), std::string::npos) << "error: " << r.error;
  }
  auto bad_env = Parse({"serve", "--tls-cert", "c", "--tls-key", "k"}, {{"CLUSTER_DOMAIN", "-bad-"}});
  EXPECT_NE(bad_env.error.find("from CLUSTER_DOMAIN"), std::string::npos) << bad_env.error;
}

TEST(CommandLine, ReviewHelpVersion) {
  auto r = Parse({"review", "--validate", "in.json"});
  ASSERT_TRUE(r.command) << r.error;
  EXPECT_EQ(r.command->kind, CommandKind::kReview);
  EXPECT_EQ(r.command->endpoint, Endpoint::kValidate);
  EXPECT_EQ(r.command->input, "in.json");
  auto stdin_review = Parse({"review", "--mutate"});
  ASSERT_TRUE(stdin_review.command);
  EXPECT_EQ(stdin_review.command->input, "-");
  EXPECT_EQ(Parse({"--help"}).command->kind, CommandKind::kHelp);
  EXPECT_EQ(Parse({"--version"}).command->kind, CommandKind::kVersion);
  EXPECT_NE(UsageText().find("--cluster-domain"), std::string::npos);
}

}  // namespace
}  // namespace ray_webhook
