#include "ray_webhook/core/review/admission_response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ray_webhook/core/json/base64.h"
#include "support/base64_decode.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

AdmissionRequest Request(ReviewVersion v = ReviewVersion::kV1) {
  AdmissionRequest r;
  r.version = v;
  r.uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
  return r;
}

TEST(AdmissionResponse, AllowWithoutPatchHasNeitherPatchField) {
  const json j = json::parse(EncodeAdmissionResponse(Request(), Decision{}));
  EXPECT_EQ(j["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(j["kind"], "AdmissionReview");
  EXPECT_EQ(j["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_FALSE(j["response"].contains("patch"));
  EXPECT_FALSE(j["response"].contains("patchType"));
  EXPECT_FALSE(j["response"].contains("status"));
  EXPECT_FALSE(j["response"].contains("warnings"));
}

TEST(AdmissionResponse, PatchAndPatchTypeComeTogether) {
  Decision d;
  d.patch.push_back({"add", "/spec/containers/0/env/-", EnvEntry{"RAY_IP", "h"}});
  d.patch.push_back({"add", "/spec/containers/1/env", std::vector<EnvEntry>{{"A", "a\"b"}}});
  d.patch.push_back({"replace", "/spec/containers/0/args/0", std::string("ray start")});
  d.patch.push_back({"remove", "/metadata/generateName", {}});
  const json j = json::parse(EncodeAdmissionResponse(Request(ReviewVersion::kV1beta1), d));
  EXPECT_EQ(j["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(j["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(j["response"]["patch"],
            Base64Encode(R"([{"op":"add","path":"/spec/containers/0/env/-","value":{"name":"RAY_IP","value":"h"}},)"
                         R"({"op":"add","path":"/spec/containers/1/env","value":[{"name":"A","value":"a\"b"}]},)"
                         R"({"op":"replace","path":"/spec/containers/0/args/0","value":"ray start"},)"
                         R"({"op":"remove","path":"/metadata/generateName"}])"));
}

// The answer is sized ahead from the operation count; a patch far larger than
// that estimate must still come out whole.
TEST(AdmissionResponse, PatchLargerThanTheAnswerWasSizedForIsWhole) {
  Decision d;
  std::vector<EnvEntry> env;
  for (int i = 0; i < 300; ++i) env.push_back({"VAR_" + std::to_string(i), std::string(100, 'a' + i % 26)});
  d.patch.push_back({"add", "/spec/containers/0/env", env});
  d.warnings.push_back("after the patch");
  const json j = json::parse(EncodeAdmissionResponse(Request(), d));
  const json patch = json::parse(Base64Decode(j["response"]["patch"].get<std::string>()).value());
  ASSERT_EQ(patch.size(), 1u);
  ASSERT_EQ(patch[0]["value"].size(), 300u);
  EXPECT_EQ(patch[0]["value"][299]["name"], "VAR_299");
  EXPECT_EQ(patch[0]["value"][299]["value"], std::string(100, 'a' + 299 % 26));
  EXPECT_EQ(j["response"]["warnings"], json::array({"after the patch"}));
}

TEST(AdmissionResponse, DenialCarriesStatus) {
  Decision d;
  d.warnings.push_back("w");
  d.patch.push_back({"add", "/x", std::string("1")});
  d.Deny({422, "Invalid", "duplicate-mount", "container \"a\" mounts \"/x\" 2 times"});
  const json j = json::parse(EncodeAdmissionResponse(Request(), d));
  const json& r = j["response"];
  EXPECT_EQ(r["allowed"], false);
  EXPECT_EQ(r["status"]["code"], 422);
  EXPECT_EQ(r["status"]["reason"], "Invalid");
  EXPECT_EQ(r["status"]["status"], "Failure");
  EXPECT_EQ(r["status"]["message"], "container \"a\" mounts \"/x\" 2 times");
  EXPECT_FALSE(r.contains("patch"));
  EXPECT_EQ(r["warnings"], json::array({"w"}));
}

TEST(AdmissionResponse, ErrorStatusIsAMetaV1Status) {
  const json j = json::parse(EncodeErrorStatus(400, "BadRequest", "bad \"thing\""));
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 400);
  EXPECT_EQ(j["message"], "bad \"thing\"");
}

TEST(AdmissionResponse, ErrorStatusBytesAndInvalidUtf8) {
  EXPECT_EQ(EncodeErrorStatus(400, "BadRequest", "bad \"thing\""),
            "{\"apiVersion\":\"v1\",\"code\":400,\"kind\":\"Status\",\"message\":\"bad \\\"thing\\\"\",\"reason\":"
            "\"BadRequest\",\"status\":\"Failure\"}");
  EXPECT_EQ(json::parse(EncodeErrorStatus(400, "BadRequest", "a\xff!"))["message"], "a\xef\xbf\xbd!");
}

}  // namespace
}  // namespace ray_webhook
