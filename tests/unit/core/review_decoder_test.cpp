#include "ray_webhook/core/review_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/decoded_request.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

TEST(ReviewDecoder, DecodesTheFieldsTheRulesRead) {
  ReviewDecoder decoder;
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

TEST(ReviewDecoder, V1beta1IsRecognised) {
  ReviewDecoder decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/v1beta1-worker.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(RequestOf(r)->version, ReviewVersion::kV1beta1);
}

TEST(ReviewDecoder, NonPodObjectsAreNotDecoded) {
  ReviewDecoder decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/not-a-pod.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->pod.has_value());
  EXPECT_FALSE(RequestOf(r)->IsPodCreate());
}

TEST(ReviewDecoder, NullObjectOnDeleteIsNotAPod) {
  ReviewDecoder decoder;
  Decoded r = decoder.Decode(ReadFixture("reviews/delete-operation.json"));
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_FALSE(RequestOf(r)->pod.has_value());
}

TEST(ReviewDecoder, EscapedStringsAreUnescaped) {
  ReviewDecoder decoder;
  Decoded r =
      decoder.Decode(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a\"b\u00e9"}})");
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(RequestOf(r)->uid, "a\"b\xc3\xa9");
}

// Each bad body gets a one-line error naming what is wrong (and where).
TEST(ReviewDecoder, BadBodiesGetPreciseErrors) {
  const auto expected = nlohmann::json::parse(ReadFixture("bad-requests/expected.json"));
  ReviewDecoder decoder;
  ASSERT_FALSE(expected["cases"].empty());
  for (const auto& [file, fragment] : expected["cases"].items()) {
    SCOPED_TRACE(file);
    Decoded r = decoder.Decode(ReadFixture("bad-requests/" + file));
    EXPECT_FALSE(RequestOf(r) != nullptr);
    EXPECT_NE(r.error().find(fragment.get<std::string>()), std::string::npos) << r.error();
  }
  // The decoder is still usable after every failure.
  EXPECT_TRUE(RequestOf(decoder.Decode(ReadFixture("reviews/kuberay-0.4-worker.json"))) != nullptr);
}

// Everything Decode fills in, one field per line, to compare two results.
std::string Describe(const AdmissionRequest& r) {
  std::string out = std::string(ApiVersionString(r.version)) + " uid=" + std::string(r.uid) +
                    " op=" + std::string(r.operation) + " ns=" + std::string(r.namespace_name) +
                    " name=" + std::string(r.name) + " kind=" + std::string(r.kind.group) + "/" +
                    std::string(r.kind.version) + "/" + std::string(r.kind.kind) + "\n";
  if (!r.pod) return out + "no pod\n";
  const ObjectMeta& m = r.pod->metadata;
  out +=
      "meta " + std::string(m.name) + " " + std::string(m.generate_name) + " " + std::string(m.namespace_name) + "\n";
  for (const auto& [k, v] : m.labels) out += "label " + std::string(k) + "=" + std::string(v) + "\n";
  for (const auto& [k, v] : m.annotations) out += "annotation " + std::string(k) + "=" + std::string(v) + "\n";
  const std::pair<const char*, const std::vector<Container>*> lists[] = {{"container", &r.pod->containers},
                                                                         {"init", &r.pod->init_containers},
                                                                         {"ephemeral", &r.pod->ephemeral_containers}};
  for (const auto& [what, list] : lists) {
    for (const Container& c : *list) {
      out += std::string(what) + " " + std::string(c.name) + " " + std::string(c.image) +
             (c.has_env_list ? " env-list\n" : "\n");
      for (auto s : c.command) out += " command " + std::string(s) + "\n";
      for (auto s : c.args) out += " arg " + std::string(s) + "\n";
      for (const EnvVar& e : c.env) {
        out += " env " + std::string(e.name) + (e.value ? "=" + std::string(*e.value) : "") + "\n";
      }
      for (const VolumeMount& v : c.volume_mounts)
        out += " mount " + std::string(v.name) + " " + std::string(v.mount_path) + "\n";
    }
  }
  return out;
}

TEST(ReviewDecoder, AReusedDecoderKeepsNothingFromTheReviewBefore) {
  // Every review fixture, in turn and then backwards, through one decoder:
  // larger Pods before smaller ones, Pods before non-Pods, and failures in
  // between. Each result must equal a fresh decoder's.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(testing::kFixtures / "reviews")) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 10u);
  std::vector<std::string> order = files;
  order.insert(order.end(), files.rbegin(), files.rend());
  ReviewDecoder reused;
  for (const std::string& file : order) {
    SCOPED_TRACE(file);
    const std::string body = ReadFixture("reviews/" + file);
    ReviewDecoder fresh;
    Decoded want = fresh.Decode(body);
    Decoded got = reused.Decode(body);
    ASSERT_EQ(RequestOf(got) != nullptr, RequestOf(want) != nullptr) << got.error();
    EXPECT_EQ(got.error(), want.error());
    if (RequestOf(want)) {
      EXPECT_EQ(Describe(*RequestOf(got)), Describe(*RequestOf(want)));
    }
    EXPECT_EQ(RequestOf(reused.Decode("{")), nullptr);  // a failure between any two reviews
  }
}

// 100,000 levels of nesting in a field the rules do not read: a decoder that
// recursed per level would overflow its thread's stack here. The Pod's own
// fields are still read.
TEST(ReviewDecoder, DeepNestingIsSkippedWithoutRecursion) {
  std::string body = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  const std::size_t spec = body.find("\"spec\": {");
  ASSERT_NE(spec, std::string::npos);
  body.insert(spec + 9, "\"deep\":" + std::string(100000, '[') + std::string(100000, ']') + ",");
  ReviewDecoder decoder;
  Decoded r = decoder.Decode(body);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  ASSERT_TRUE(RequestOf(r)->pod);
  ASSERT_EQ(RequestOf(r)->pod->containers.size(), 1u);
  EXPECT_EQ(RequestOf(r)->pod->containers[0].name, "ray-worker");
}

// One pass in document order: the kind may come after the object it names,
// and a repeated key counts with its last value, as in Go's encoding/json.
TEST(ReviewDecoder, KindAfterObjectAndRepeatedKeys) {
  ReviewDecoder decoder;
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

TEST(ReviewDecoder, DecodesTheRayClusterFieldsTheTemplateRulesRead) {
  ReviewDecoder decoder;
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

TEST(ReviewDecoder, RayJobsAndRayServicesCarryTheirClusterSpecNested) {
  ReviewDecoder decoder;
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

TEST(ReviewDecoder, AnUpdateCarriesTheStoredObject) {
  ReviewDecoder decoder;
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
TEST(ReviewDecoder, ARayObjectBeforeItsKindIsRefused) {
  ReviewDecoder decoder;
  Decoded r = decoder.Decode(ReadFixture("decoding/ray-object-before-kind.json"));
  EXPECT_FALSE(RequestOf(r));
  EXPECT_NE(r.error().find("must come after request.kind"), std::string::npos) << r.error();
}

// A root that is valid JSON but no object is "not a JSON object"; a bare word
// that only starts like a literal is invalid JSON.
TEST(ReviewDecoder, ScalarRootsAreToldFromInvalidJson) {
  ReviewDecoder decoder;
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
TEST(ReviewDecoder, TrailingContentIsInvalidJson) {
  ReviewDecoder decoder;
  const std::string review = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  EXPECT_TRUE(RequestOf(decoder.Decode(review + " \n")) != nullptr);
  for (const std::string tail : {" {}", " x", " 1", ","}) {
    SCOPED_TRACE(tail);
    Decoded r = decoder.Decode(review + tail);
    EXPECT_EQ(RequestOf(r), nullptr);
    EXPECT_NE(r.error().find("not valid JSON"), std::string::npos) << r.error();
  }
}

TEST(ReviewDecoder, ALargeBodyGrowsItAndShrinkToDefaultGivesThatBack) {
  ReviewDecoder decoder;
  EXPECT_EQ(decoder.capacity(), ReviewDecoder::kDefaultCapacity);
  const std::string small = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  const std::string large = testing::PaddedReview("reviews/kuberay-1.0-worker-short.json", 300 * 1024);

  Decoded r = decoder.Decode(large);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(Lookup(RequestOf(r)->pod->metadata.annotations, "example.com/padding").value_or("").size(), 300u * 1024);
  EXPECT_GE(decoder.capacity(), large.size());

  decoder.ShrinkToDefault();
  EXPECT_EQ(decoder.capacity(), ReviewDecoder::kDefaultCapacity);
  // Still a working decoder: small bodies fit, a large one grows it again.
  r = decoder.Decode(small);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(Lookup(RequestOf(r)->pod->metadata.labels, "ray.io/node-type"), "worker");
  EXPECT_EQ(decoder.capacity(), ReviewDecoder::kDefaultCapacity);
  r = decoder.Decode(large);
  ASSERT_TRUE(RequestOf(r)) << r.error();
  EXPECT_EQ(Lookup(RequestOf(r)->pod->metadata.annotations, "example.com/padding").value_or("").size(), 300u * 1024);
}

TEST(ReviewDecoder, ShrinkToDefaultKeepsTheBuffersOfADecoderThatNeverGrew) {
  ReviewDecoder decoder;
  const std::string small = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  const AdmissionRequest* before = RequestOf(decoder.Decode(small));
  ASSERT_TRUE(before);
  decoder.ShrinkToDefault();
  // The same request object is refilled: nothing was freed and made anew.
  EXPECT_EQ(RequestOf(decoder.Decode(small)), before);
}

}  // namespace
}  // namespace ray_webhook
