#include "ray_webhook/kube/https_get.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

TEST(ParseHttpsUrlTest, TakesHostsPortsAndAnyIpv6Literal) {
  auto t = ParseHttpsUrl("https://10.96.0.1:443");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "10.96.0.1");
  EXPECT_EQ(t->port, 443);
  t = ParseHttpsUrl("https://kubernetes.default.svc");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "kubernetes.default.svc");
  EXPECT_EQ(t->port, 443);
  // cpp-httplib 0.11's URL pattern takes no hex letters in a bracketed host.
  t = ParseHttpsUrl("https://[fd00:abcd::1]:6443/");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "fd00:abcd::1");
  EXPECT_EQ(t->port, 6443);
  t = ParseHttpsUrl("https://[::1]");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "::1");
}

TEST(ParseHttpsUrlTest, RefusesWhatIsNotOneHttpsAuthority) {
  for (const char* bad :
       {"http://10.0.0.1", "https://", "https://[fd00::1", "https://[not-v6]:443", "https://host:0",
        "https://host:65536", "https://host:", "https://host/api", "https://user@host", "https://host:44x"}) {
    EXPECT_FALSE(ParseHttpsUrl(bad)) << bad;
  }
}

}  // namespace
}  // namespace ray_webhook
