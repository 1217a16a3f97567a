#include "ray_webhook/core/decode/review_decoder.h"

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
