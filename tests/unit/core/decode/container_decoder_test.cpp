#include "core/decode/container_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;

// {"list": ...} through DecodeContainers at path "spec.containers".
JsonReader Containers(BareObject& bare, const std::string& json, std::vector<Container>* out) {
  return bare.Walk(json, [&](od::object root, JsonReader& r) {
    r.Fields(root, [&](std::string_view, od::value v) { DecodeContainers(v, "spec.containers", r, out); });
  });
}

TEST(ContainerDecoder, ReadsTheFieldsTheRulesRead) {
  BareObject bare;
  std::vector<Container> out;
  const std::string list = testing::ReviewObject("reviews/kuberay-1.0-worker-short.json")["spec"]["containers"].dump();
  const JsonReader r = Containers(bare, "{\"list\":" + list + "}", &out);
  ASSERT_FALSE(r.failed()) << r.error();
  ASSERT_EQ(out.size(), 1u);
  const Container& c = out[0];
  EXPECT_EQ(c.name, "ray-worker");
  EXPECT_EQ(c.image, "rayproject/ray:2.9.0");
  EXPECT_TRUE(c.has_env_list);
  EXPECT_EQ(c.command.size(), 3u);
  ASSERT_EQ(c.args.size(), 1u);
  EXPECT_NE(c.args[0].find("--address=raycluster-kuberay-head-svc:6379"), std::string_view::npos);
  // valueFrom entries and entries with no value decode without a value.
  ASSERT_GE(c.env.size(), 7u);
  EXPECT_EQ(c.env[0].name, "RAY_CLUSTER_NAME");
  EXPECT_FALSE(c.env[0].value.has_value());
  EXPECT_EQ(c.env[3].name, "RAY_PORT");
  EXPECT_EQ(c.env[3].value, "6379");
  EXPECT_EQ(c.volume_mounts.size(), 3u);
  EXPECT_EQ(c.volume_mounts[1].mount_path, "/dev/shm");
}

TEST(ContainerDecoder, AnErrorNamesTheContainerByIndex) {
  BareObject bare;
  std::vector<Container> out;
  EXPECT_EQ(Containers(bare, R"({"list":[{"name":"a"},{"env":[{"name":"X","value":1}]}]})", &out).error(),
            "spec.containers[1].env[].value: expected a string");
  EXPECT_EQ(Containers(bare, R"({"list":[{"name":"a"},7]})", &out).error(), "spec.containers[1]: expected an object");
  EXPECT_EQ(Containers(bare, R"({"list":[{"volumeMounts":[1]}]})", &out).error(),
            "spec.containers[0].volumeMounts: expected an array of objects");
  EXPECT_EQ(Containers(bare, R"({"list":{}})", &out).error(), "spec.containers: expected an array");
}

// A null env is no list (a patch must create one); an empty one is a list.
TEST(ContainerDecoder, AnEnvListIsToldFromNone) {
  BareObject bare;
  std::vector<Container> out;
  ASSERT_FALSE(Containers(bare, R"({"list":[{"env":null},{"env":[]},{}]})", &out).failed());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].has_env_list);
  EXPECT_TRUE(out[1].has_env_list);
  EXPECT_FALSE(out[2].has_env_list);
}

// Refilled in place: a shorter list drops the rest, and no field survives
// from the container that was at the same index before.
TEST(ContainerDecoder, RefillsTheListInPlace) {
  BareObject bare;
  std::vector<Container> out;
  ASSERT_FALSE(
      Containers(bare, R"({"list":[{"name":"a","image":"i","env":[{"name":"E"}],"args":["x"]},{"name":"b"}]})", &out)
          .failed());
  ASSERT_EQ(out.size(), 2u);
  ASSERT_FALSE(Containers(bare, R"({"list":[{"name":"c"}]})", &out).failed());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "c");
  EXPECT_EQ(out[0].image, "");
  EXPECT_TRUE(out[0].env.empty());
  EXPECT_TRUE(out[0].args.empty());
  EXPECT_FALSE(out[0].has_env_list);
  ASSERT_FALSE(Containers(bare, R"({"list":null})", &out).failed());
  EXPECT_TRUE(out.empty());
}

TEST(ContainerDecoder, VolumeMountsReportAtThePathsGiven) {
  BareObject bare;
  std::vector<VolumeMount> out;
  const MountPaths paths{"opts.volumeMounts", "opts.volumeMounts[].name", "opts.volumeMounts[].mountPath"};
  auto mounts = [&](const std::string& json) {
    return bare.Walk(json, [&](od::object root, JsonReader& r) {
      r.Fields(root, [&](std::string_view, od::value v) { DecodeVolumeMounts(v, paths, r, &out); });
    });
  };
  ASSERT_FALSE(mounts(R"({"m":[{"name":"a","mountPath":"/a"},{"name":"b"}]})").failed());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].mount_path, "/a");
  EXPECT_EQ(out[1].name, "b");
  EXPECT_EQ(mounts(R"({"m":[{"mountPath":1}]})").error(), "opts.volumeMounts[].mountPath: expected a string");
  EXPECT_EQ(mounts(R"({"m":[{"name":false}]})").error(), "opts.volumeMounts[].name: expected a string");
}

}  // namespace
}  // namespace ray_webhook
