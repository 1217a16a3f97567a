#include "ray_webhook/review_decoder.h"

#include <gtest/gtest.h>

#include "fixture_files.h"

#include <nlohmann/json.hpp>

namespace ray_webhook {
namespace {

using testing::ReadFixture;

TEST(ReviewDecoder, DecodesTheFieldsTheRulesRead) {
  ReviewDecoder decoder;
  const std::string body = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  DecodeResult r = decoder.Decode(body);
  ASSERT_TRUE(r.request) << r.error;
  const AdmissionRequest& req = *r.request;
  EXPECT_EQ(req.version, ReviewVersion::kV1);
  EXPECT_FALSE(req.uid.empty());
  EXPECT_EQ(req.operation, "CREATE");
  EXPECT_EQ(req.namespace_name, "default");
  EXPECT_TRUE(req.IsPodCreate());
  const Pod& pod = *req.pod;
  EXPECT_EQ(pod.metadata.generate_name, "raycluster-kuberay-workergroup-worker-");
  EXPECT_EQ(Lookup(pod.metadata.labels, "ray.io/node-type"), "worker");
  ASSERT_EQ(pod.containers.size(), 1u);
  const Container& c = pod.containers[0];
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
  ASSERT_EQ(pod.init_containers.size(), 1u);
  EXPECT_FALSE(pod.init_containers[0].has_env_list);
}

TEST(ReviewDecoder, V1beta1IsRecognised) {
  ReviewDecoder decoder;
  DecodeResult r = decoder.Decode(ReadFixture("reviews/v1beta1-worker.json"));
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->version, ReviewVersion::kV1beta1);
}

TEST(ReviewDecoder, NonPodObjectsAreNotDecoded) {
  ReviewDecoder decoder;
  DecodeResult r = decoder.Decode(ReadFixture("reviews/not-a-pod.json"));
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_FALSE(r.request->pod.has_value());
  EXPECT_FALSE(r.request->IsPodCreate());
}

TEST(ReviewDecoder, NullObjectOnDeleteIsNotAPod) {
  ReviewDecoder decoder;
  DecodeResult r = decoder.Decode(ReadFixture("reviews/delete-operation.json"));
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_FALSE(r.request->pod.has_value());
}

TEST(ReviewDecoder, EscapedStringsAreUnescaped) {
  ReviewDecoder decoder;
  DecodeResult r = decoder.Decode(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a\"b\u00e9"}})");
  ASSERT_TRUE(r.request) << r.error;
  EXPECT_EQ(r.request->uid, "a\"b\xc3\xa9");
}

// Each bad body gets a one-line error naming what is wrong (and where).
TEST(ReviewDecoder, BadBodiesGetPreciseErrors) {
  const auto expected = nlohmann::json::parse(ReadFixture("bad-requests/expected.json"));
  ReviewDecoder decoder;
  ASSERT_FALSE(expected["cases"].empty());
  for (const auto& [file, fragment] : expected["cases"].items()) {
    SCOPED_TRACE(file);
    DecodeResult r = decoder.Decode(ReadFixture("bad-requests/" + file));
    EXPECT_FALSE(r.request.has_value());
    EXPECT_NE(r.error.find(fragment.get<std::string>()), std::string::npos) << r.error;
  }
  // The decoder is still usable after every failure.
  EXPECT_TRUE(decoder.Decode(ReadFixture("reviews/kuberay-0.4-worker.json")).request.has_value());
}

TEST(ReviewDecoder, DepthBoundIsConfigurable) {
  std::string nested = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","x":)";
  nested += std::string(20, '[') + std::string(20, ']') + "}}";
  EXPECT_TRUE(ReviewDecoder(200).Decode(nested).request.has_value());
  EXPECT_NE(ReviewDecoder(10).Decode(nested).error.find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace ray_webhook
