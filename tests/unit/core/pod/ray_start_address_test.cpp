#include "core/pod/ray_start_address.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

constexpr std::string_view kSvc = "raycluster-kuberay-head-svc";
constexpr std::string_view kFqdn = "raycluster-kuberay-head-svc.default.svc.cluster.local";

TEST(IsShortServiceName, AcceptsBareDnsLabelsOnly) {
  EXPECT_TRUE(IsShortServiceName("raycluster-kuberay-head-svc"));
  EXPECT_TRUE(IsShortServiceName("my-head"));
  EXPECT_FALSE(IsShortServiceName("head.default.svc"));
  EXPECT_FALSE(IsShortServiceName("10.0.0.12"));
  EXPECT_FALSE(IsShortServiceName("localhost"));
  EXPECT_FALSE(IsShortServiceName("$(RAY_IP)"));
  EXPECT_FALSE(IsShortServiceName("Upper"));
  EXPECT_FALSE(IsShortServiceName("1abc"));
  EXPECT_FALSE(IsShortServiceName("abc-"));
  EXPECT_FALSE(IsShortServiceName(""));
  EXPECT_FALSE(IsShortServiceName(std::string(64, 'a')));
}

using Hosts = std::vector<std::string_view>;

TEST(AddressHosts, KubeRay04WorkerArgs) {
  EXPECT_EQ(AddressHosts("ulimit -n 65536; ray start  --address=raycluster-kuberay-head-svc:6379  --block"),
            Hosts{"raycluster-kuberay-head-svc"});
}

TEST(AddressHosts, EveryWellFormedAddressInOrder) {
  EXPECT_EQ(AddressHosts("ray start --address=a.b.svc:6379 --address 10.1.2.3:6379 --address='q:1'"),
            (Hosts{"a.b.svc", "10.1.2.3", "q"}));
}

TEST(AddressHosts, MalformedOrOtherFlagsAreNotAddresses) {
  EXPECT_TRUE(AddressHosts("ray start --address=auto").empty());
  EXPECT_TRUE(AddressHosts("ray start --address=head:port").empty());
  EXPECT_TRUE(AddressHosts("ray start --gcs-address=head:6379").empty());
  EXPECT_TRUE(AddressHosts("ray start --address-x head:6379").empty());
  EXPECT_TRUE(AddressHosts("x--address=head:6379").empty());
}

TEST(RewriteRayStartAddress, EqualsForm) {
  EXPECT_EQ(RewriteRayStartAddress("ray start --address=raycluster-kuberay-head-svc:6379 --block", kSvc, kFqdn),
            "ray start --address=raycluster-kuberay-head-svc.default.svc.cluster.local:6379 --block");
}

TEST(RewriteRayStartAddress, SpaceFormKeepsSeparatorAndPort) {
  EXPECT_EQ(RewriteRayStartAddress("ray health-check --address  raycluster-kuberay-head-svc:6380", kSvc, kFqdn),
            "ray health-check --address  raycluster-kuberay-head-svc.default.svc.cluster.local:6380");
}

TEST(RewriteRayStartAddress, EveryOccurrenceIsRewritten) {
  EXPECT_EQ(RewriteRayStartAddress(
                "a --address=raycluster-kuberay-head-svc:1 && b --address raycluster-kuberay-head-svc:2;", kSvc, kFqdn),
            "a --address=raycluster-kuberay-head-svc.default.svc.cluster.local:1 && b --address "
            "raycluster-kuberay-head-svc.default.svc.cluster.local:2;");
}

TEST(RewriteRayStartAddress, QuotedAddressAndCommandElement) {
  EXPECT_EQ(RewriteRayStartAddress("--address='raycluster-kuberay-head-svc:6379'", kSvc, kFqdn),
            "--address='raycluster-kuberay-head-svc.default.svc.cluster.local:6379'");
  EXPECT_EQ(RewriteRayStartAddress("--address=raycluster-kuberay-head-svc:6379", kSvc, kFqdn),
            "--address=raycluster-kuberay-head-svc.default.svc.cluster.local:6379");
}

TEST(RewriteRayStartAddress, OtherHostsAreLeftAlone) {
  EXPECT_EQ(RewriteRayStartAddress("ray start --address=10.0.0.12:6379", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteRayStartAddress("ray start --address=other-svc:6379", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteRayStartAddress(std::string("ray start --address=") + std::string(kFqdn) + ":6379", kSvc, kFqdn),
            std::nullopt);
  // A longer name that merely starts with the service name is another host.
  EXPECT_EQ(RewriteRayStartAddress("ray start --address=raycluster-kuberay-head-svc2:6379", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteRayStartAddress("echo no flag here", kSvc, kFqdn), std::nullopt);
}

TEST(RewriteRayStartAddress, RewritingTwiceChangesNothingMore) {
  const auto once = RewriteRayStartAddress("ray start --address=raycluster-kuberay-head-svc:6379", kSvc, kFqdn);
  ASSERT_TRUE(once);
  EXPECT_EQ(RewriteRayStartAddress(*once, kSvc, kFqdn), std::nullopt);
}

TEST(RewriteHostPort, OnlyExactServiceColonPort) {
  EXPECT_EQ(RewriteHostPort("raycluster-kuberay-head-svc:6379", kSvc, kFqdn),
            "raycluster-kuberay-head-svc.default.svc.cluster.local:6379");
  EXPECT_EQ(RewriteHostPort("raycluster-kuberay-head-svc", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteHostPort("raycluster-kuberay-head-svc:", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteHostPort("raycluster-kuberay-head-svc:63x", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteHostPort("127.0.0.1:6379", kSvc, kFqdn), std::nullopt);
  EXPECT_EQ(RewriteHostPort("raycluster-kuberay-head-svc2:6379", kSvc, kFqdn), std::nullopt);
}

}  // namespace
}  // namespace ray_webhook
