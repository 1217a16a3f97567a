// Runs every review fixture through the in-process entry point and checks the
// resulting Pod, not the patch bytes: the patch is applied as kube-apiserver
// applies it (RFC 6902), compared with the expected Pod, and the patched Pod
// is reviewed again to prove idempotence (reinvocationPolicy: IfNeeded).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ray_webhook/core/json/base64.h"
#include "ray_webhook/core/review/review_handler.h"
#include "support/base64_decode.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::kFixtures;
using testing::ReadFixture;

json ReadJson(const fs::path& relative) { return json::parse(ReadFixture(relative)); }

json Review(const json& review, Endpoint endpoint) {
  ReviewDecoder decoder;
  PolicyConfig config;
  ReviewOutcome out = HandleReview(review.dump(), endpoint, config, decoder);
  EXPECT_EQ(out.http_status, 200) << out.body;
  return json::parse(out.body);
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kFixtures / "reviews")) names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, AnswerMatchesExpectation) {
  const json review = ReadJson(fs::path("reviews") / (GetParam() + ".json"));
  const json expected = ReadJson(fs::path("expected") / (GetParam() + ".json"));
  for (const auto& [endpoint_name, endpoint] :
       {std::pair{"mutate", Endpoint::kMutate}, std::pair{"validate", Endpoint::kValidate}}) {
    SCOPED_TRACE(endpoint_name);
    const json& want = expected.at(endpoint_name);
    const json answer = Review(review, endpoint);
    EXPECT_EQ(answer["apiVersion"], review["apiVersion"]);
    EXPECT_EQ(answer["kind"], "AdmissionReview");
    const json& resp = answer["response"];
    EXPECT_EQ(resp["uid"], review["request"]["uid"]);
    EXPECT_EQ(resp["allowed"], want["allowed"]);
    if (!want["allowed"].get<bool>()) {
      EXPECT_EQ(resp["status"]["code"], want["code"]);
      for (const auto& fragment : want["message_contains"]) {
        EXPECT_NE(resp["status"]["message"].get<std::string>().find(fragment.get<std::string>()), std::string::npos)
            << "message lacks " << fragment << ": " << resp["status"]["message"];
      }
    }
    if (want.contains("warnings_contain")) {
      ASSERT_TRUE(resp.contains("warnings"));
      for (const auto& fragment : want["warnings_contain"]) {
        bool found = false;
        for (const auto& w : resp["warnings"])
          found |= w.get<std::string>().find(fragment.get<std::string>()) != std::string::npos;
        EXPECT_TRUE(found) << "no warning contains " << fragment;
      }
    } else {
      EXPECT_FALSE(resp.contains("warnings")) << resp.dump();
    }

    if (want["pod"].is_null()) {
      EXPECT_FALSE(resp.contains("patch")) << resp.dump();
      EXPECT_FALSE(resp.contains("patchType"));
      continue;
    }
    ASSERT_EQ(endpoint, Endpoint::kMutate) << "/validate never patches";
    ASSERT_EQ(resp["patchType"], "JSONPatch");
    const json patch = json::parse(Base64Decode(resp["patch"].get<std::string>()).value());
    for (const auto& op : patch) {
      EXPECT_TRUE(op["op"] == "add" || op["op"] == "replace" ||
                  (op["op"] == "remove" && op["path"] == "/metadata/generateName"))
          << op.dump();
      // Lists are appended to or created, never replaced whole.
      EXPECT_FALSE(op["op"] == "replace" && op["value"].is_array()) << op.dump();
    }
    const json patched = review["request"]["object"].patch(patch);
    EXPECT_EQ(patched, ReadJson(fs::path("expected") / want["pod"].get<std::string>())) << "patched pod:\n"
                                                                                        << patched.dump(2);

    // Idempotence: the patched Pod, sent again, needs nothing more, and passes validation.
    json again = review;
    again["request"]["object"] = patched;
    again["request"]["uid"] = "second-call";
    const json second = Review(again, Endpoint::kMutate);
    EXPECT_FALSE(second["response"].contains("patch")) << "second call patched again: " << second.dump();
    EXPECT_EQ(second["response"]["allowed"], true);
    EXPECT_EQ(Review(again, Endpoint::kValidate)["response"]["allowed"], true);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureTest, ::testing::ValuesIn(CaseNames()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

TEST(FixtureSet, CoversEveryKubeRayReleaseShape) {
  const auto names = CaseNames();
  for (const char* required : {"kuberay-0.4-worker", "kuberay-1.0-worker", "kuberay-1.7-worker"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
}

}  // namespace
}  // namespace ray_webhook
