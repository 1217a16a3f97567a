#include "core/decode/review_envelope_decoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ray_webhook/core/decode/review_decoder.h"
#include "support/decoded_request.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

// DecodeReviewEnvelope with the state ReviewDecoder keeps for it.
struct Envelope {
  JsonParser parser{ReviewDecoder::kDefaultCapacity};
  AdmissionRequest request;
  Pod spare_pod;

  Decoded Decode(std::string_view body) {
    Status s = DecodeReviewEnvelope(parser, body, 0, request, spare_pod);
    if (!s.ok()) return s;
    return &request;
  }
};

TEST(ReviewEnvelopeDecoder, DecodesTheFieldsTheRulesRead) {
  Envelope decoder;
  const std::string body = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  Decoded r = decoder.Decode(body);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  const AdmissionRequest& req = *RequestOf(r);
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

TEST(ReviewEnvelopeDecoder, V1beta1IsRecognised) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/v1beta1-worker.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(RequestOf(r)->version, ReviewVersion::kV1beta1);
}

TEST(ReviewEnvelopeDecoder, NonPodObjectsAreNotDecoded) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/not-a-pod.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->pod.has_value());
  EXPECT_FALSE(RequestOf(r)->IsPodCreate());
}

TEST(ReviewEnvelopeDecoder, NullObjectOnDeleteIsNotAPod) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/delete-operation.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->pod.has_value());
}

TEST(ReviewEnvelopeDecoder, EscapedStringsAreUnescaped) {
  Envelope decoder;
  Decoded r =
      decoder.Decode(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a\"b\u00e9"}})");
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(RequestOf(r)->uid, "a\"b\xc3\xa9");
}

// 100,000 levels of nesting in a field the rules do not read: a decoder that
// recursed per level would overflow its thread's stack here. The Pod's own
// fields are still read.
TEST(ReviewEnvelopeDecoder, DeepNestingIsSkippedWithoutRecursion) {
  std::string body = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  const std::size_t spec = body.find("\"spec\": {");
  ASSERT_NE(spec, std::string::npos);
  body.insert(spec + 9, "\"deep\":" + std::string(100000, '[') + std::string(100000, ']') + ",");
  Envelope decoder;
  Decoded r = decoder.Decode(body);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  ASSERT_TRUE(RequestOf(r)->pod);
  ASSERT_EQ(RequestOf(r)->pod->containers.size(), 1u);
  EXPECT_EQ(RequestOf(r)->pod->containers[0].name, "ray-worker");
}

// One pass in document order: the kind may come after the object it names,
// and a repeated key counts with its last value, as in Go's encoding/json.
TEST(ReviewEnvelopeDecoder, KindAfterObjectAndRepeatedKeys) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("decoding/kind-after-object-repeated-keys.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(RequestOf(r)->uid, "second");
  ASSERT_TRUE(RequestOf(r)->pod);
  ASSERT_EQ(RequestOf(r)->pod->containers.size(), 1u);
  EXPECT_EQ(RequestOf(r)->pod->containers[0].name, "last");
  EXPECT_EQ(Lookup(RequestOf(r)->pod->metadata.labels, "a"), std::nullopt);
  EXPECT_EQ(Lookup(RequestOf(r)->pod->metadata.labels, "b"), "2");
  // A type error in an object that turns out not to be a Pod is not an error.
  r = decoder.Decode(ReadFixture("decoding/not-a-pod-after-object.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->pod);
}

TEST(ReviewEnvelopeDecoder, DecodesTheRayClusterFieldsTheTemplateRulesRead) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/raycluster-token-dupmount.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  const AdmissionRequest& req = *RequestOf(r);
  EXPECT_FALSE(req.pod);
  EXPECT_TRUE(req.IsRayObjectWrite());
  ASSERT_TRUE(req.ray_object);
  const RayObject& o = *req.ray_object;
  EXPECT_EQ(o.kind, RayObjectKind::kRayCluster);
  EXPECT_EQ(o.metadata.name, "raycluster-auth");
  ASSERT_TRUE(o.cluster);
  EXPECT_TRUE(o.cluster->K8sTokenAuth());
  EXPECT_FALSE(o.cluster->enable_in_tree_autoscaling);
  ASSERT_TRUE(o.cluster->has_head_group);
  ASSERT_EQ(o.cluster->head_group.template_pod.containers.size(), 1u);
  EXPECT_EQ(o.cluster->head_group.template_pod.containers[0].name, "ray-head");
  ASSERT_EQ(o.cluster->worker_groups.size(), 1u);
  const RayGroupSpec& w = o.cluster->worker_groups[0];
  EXPECT_EQ(w.group_name, "workergroup");
  ASSERT_EQ(w.template_pod.containers.size(), 1u);
  ASSERT_EQ(w.template_pod.containers[0].volume_mounts.size(), 1u);
  EXPECT_EQ(w.template_pod.containers[0].volume_mounts[0].mount_path, "/var/run/secrets/ray.io/serviceaccount");
  EXPECT_FALSE(req.old_ray_object);
}

// KubeRay's spec checks read the object's own text: it is exactly request.object (and oldObject), wherever
// the object's fields stand and whatever follows the object.
TEST(ReviewEnvelopeDecoder, ARayObjectKeepsItsOwnTextAndSoDoesTheStoredOne) {
  for (const char* fixture : {"reviews/raycluster-update-new-finding.json", "reviews/rayservice-sample.json",
                              "reviews/rayjob-cluster-selector.json"}) {
    SCOPED_TRACE(fixture);
    const std::string body = ReadFixture(fixture);
    const nlohmann::json review = nlohmann::json::parse(body);
    Envelope decoder;
    Decoded r = decoder.Decode(body);
    ASSERT_TRUE(RequestOf(r)) << r.error();
    const AdmissionRequest& req = *RequestOf(r);
    ASSERT_TRUE(req.ray_object);
    EXPECT_EQ(nlohmann::json::parse(req.ray_object->raw_json), review["request"]["object"]);
    if (review["request"].contains("oldObject") && review["request"]["oldObject"].is_object()) {
      ASSERT_TRUE(req.old_ray_object);
      EXPECT_EQ(nlohmann::json::parse(req.old_ray_object->raw_json), review["request"]["oldObject"]);
    }
  }
}

TEST(ReviewEnvelopeDecoder, RayJobsAndRayServicesCarryTheirClusterSpecNested) {
  Envelope decoder;
  Decoded job = decoder.Decode(ReadFixture("reviews/rayjob-dupmount.json"));
  ASSERT_TRUE(RequestOf(job)) << job.error();
  ASSERT_TRUE(RequestOf(job)->ray_object);
  EXPECT_EQ(RequestOf(job)->ray_object->kind, RayObjectKind::kRayJob);
  ASSERT_TRUE(RequestOf(job)->ray_object->cluster);
  EXPECT_EQ(RequestOf(job)->ray_object->cluster->worker_groups.at(0).group_name, "small-group");

  Decoded selector = decoder.Decode(ReadFixture("reviews/rayjob-cluster-selector.json"));
  ASSERT_TRUE(RequestOf(selector)) << selector.error();
  EXPECT_TRUE(RequestOf(selector)->ray_object->uses_cluster_selector);
  EXPECT_FALSE(RequestOf(selector)->ray_object->cluster);

  Decoded service = decoder.Decode(ReadFixture("reviews/rayservice-sample.json"));
  ASSERT_TRUE(RequestOf(service)) << service.error();
  const RayObject& s = *RequestOf(service)->ray_object;
  EXPECT_EQ(s.kind, RayObjectKind::kRayService);
  ASSERT_TRUE(s.cluster);
  EXPECT_EQ(Lookup(s.cluster->head_group.ray_start_params, "num-cpus"), "0");

  Decoded alpha = decoder.Decode(ReadFixture("reviews/raycluster-v1alpha1-dupmount.json"));
  ASSERT_TRUE(RequestOf(alpha)) << alpha.error();
  EXPECT_TRUE(RequestOf(alpha)->ray_object);
}

TEST(ReviewEnvelopeDecoder, AnUpdateCarriesTheStoredObject) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/raycluster-update-new-finding.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  ASSERT_TRUE(RequestOf(r)->old_ray_object);
  EXPECT_TRUE(
      RequestOf(r)->old_ray_object->cluster->worker_groups.at(0).template_pod.containers.at(0).volume_mounts.empty());
  EXPECT_EQ(RequestOf(r)->ray_object->cluster->worker_groups.at(0).template_pod.containers.at(0).volume_mounts.size(),
            1u);
  // A stored object of the wrong shape is as good as none; the new one must read.
  auto review = nlohmann::json::parse(ReadFixture("reviews/raycluster-update-new-finding.json"));
  review["request"]["oldObject"]["spec"]["workerGroupSpecs"] = "oops";
  const std::string body = review.dump();
  r = decoder.Decode(body);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->old_ray_object);
  review["request"]["object"]["spec"]["workerGroupSpecs"] = "oops";
  const std::string bad = review.dump();
  EXPECT_NE(decoder.Decode(bad).error().find("request.object.spec.workerGroupSpecs: expected an array"),
            std::string::npos);
}

// A ray.io object read before its kind was known was read as a Pod, and is not read twice.
TEST(ReviewEnvelopeDecoder, ARayObjectBeforeItsKindIsRefused) {
  Envelope decoder;
  Decoded r = decoder.Decode(ReadFixture("decoding/ray-object-before-kind.json"));
  EXPECT_FALSE(RequestOf(r));
  EXPECT_NE(r.error().find("must come after request.kind"), std::string::npos) << r.error();
}

// A root that is valid JSON but no object is "not a JSON object"; a bare word
// that only starts like a literal is invalid JSON.
TEST(ReviewEnvelopeDecoder, ScalarRootsAreToldFromInvalidJson) {
  Envelope decoder;
  for (const std::string body : {"12", "\"x\"", "true", "null", "[]"}) {
    SCOPED_TRACE(body);
    EXPECT_NE(decoder.Decode(body).error().find("not a JSON object"), std::string::npos);
  }
  for (const std::string body : {"tru", "nul", "-"}) {
    SCOPED_TRACE(body);
    EXPECT_NE(decoder.Decode(body).error().find("not valid JSON"), std::string::npos);
  }
}

// Whatever follows the review is invalid JSON, as for Go's decoder.
TEST(ReviewEnvelopeDecoder, TrailingContentIsInvalidJson) {
  Envelope decoder;
  const std::string review = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  EXPECT_TRUE(RequestOf(decoder.Decode(review + " \n")) != nullptr);
  for (const std::string tail : {" {}", " x", " 1", ","}) {
    SCOPED_TRACE(tail);
    Decoded r = decoder.Decode(review + tail);
    EXPECT_EQ(RequestOf(r), nullptr);
    EXPECT_NE(r.error().find("not valid JSON"), std::string::npos) << r.error();
  }
}

}  // namespace
}  // namespace ray_webhook
