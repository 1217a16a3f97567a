#include "ray_webhook/logging/review_log_line.h"

#include <gtest/gtest.h>

#include <string>

namespace ray_webhook {
namespace {

std::string Value(std::string_view v) {
  std::string line;
  AppendLogValue(v, &line);
  return line;
}

ReviewLogFields Worker() {
  ReviewLogFields f;
  f.path = "/mutate";
  f.uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
  f.namespace_name = "ray";
  f.pod = "raycluster-kuberay-worker-workergroup-";
  f.cluster = "raycluster-kuberay";
  f.patch_ops = 3;
  f.micros = 12;
  return f;
}

TEST(ReviewLogLine, AllowedReviewReadsAsKeyValuePairs) {
  std::string line;
  AppendReviewLogLine(Worker(), &line);
  EXPECT_EQ(line,
            "review path=/mutate uid=705ab4f5-6393-11e8-b7cc-42010a800002 namespace=ray "
            "pod=raycluster-kuberay-worker-workergroup- cluster=raycluster-kuberay decision=allow rule=- "
            "patch_ops=3 warnings=0 head_lookup=no us=12");
}

TEST(ReviewLogLine, DeniedReviewNamesItsRule) {
  ReviewLogFields f = Worker();
  f.path = "/validate";
  f.allowed = false;
  f.rule = "second-head";
  f.patch_ops = 0;
  f.warnings = 2;
  f.looked_up_heads = true;
  f.micros = 1234567;
  std::string line = "prefix ";
  AppendReviewLogLine(f, &line);
  EXPECT_EQ(line,
            "prefix review path=/validate uid=705ab4f5-6393-11e8-b7cc-42010a800002 namespace=ray "
            "pod=raycluster-kuberay-worker-workergroup- cluster=raycluster-kuberay decision=deny rule=second-head "
            "patch_ops=0 warnings=2 head_lookup=yes us=1234567");
}

TEST(ReviewLogLine, AHostileValueCannotForgeAField) {
  ReviewLogFields f = Worker();
  f.uid = "x decision=deny";
  f.cluster = "";
  std::string line;
  AppendReviewLogLine(f, &line);
  EXPECT_NE(line.find(" uid=\"x decision=deny\" "), std::string::npos) << line;
  EXPECT_NE(line.find(" cluster=\"\" "), std::string::npos) << line;
  EXPECT_EQ(line.find("decision=deny rule"), std::string::npos) << line;
}

TEST(ReviewLogLine, ValuesAreQuotedOnlyWhenTheyNeedIt) {
  EXPECT_EQ(Value("raycluster-kuberay"), "raycluster-kuberay");
  EXPECT_EQ(Value("caf\xC3\xA9"), "caf\xC3\xA9");  // UTF-8 text stays bare
  EXPECT_EQ(Value(""), "\"\"");
  EXPECT_EQ(Value("a b"), "\"a b\"");
  EXPECT_EQ(Value("a=b"), "\"a=b\"");
  EXPECT_EQ(Value("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(Value("back\\slash"), "\"back\\\\slash\"");
  EXPECT_EQ(Value("line\nbreak"), "\"line\\x0abreak\"");
  EXPECT_EQ(Value("del\x7F"), "\"del\\x7f\"");
  EXPECT_EQ(Value("next\xC2\x85line"), "\"next\\x85line\"");  // C1 control NEL
}

TEST(ReviewLogLine, LongValuesAreCutAtACharacterBoundary) {
  EXPECT_EQ(Value(std::string(300, 'a')), std::string(253, 'a'));
  // A two-byte character across byte 253 is left out whole.
  const std::string straddling = std::string(252, 'a') + "\xC3\xA9" + "tail";
  EXPECT_EQ(Value(straddling), std::string(252, 'a'));
  // Quoted values are cut at 128 bytes and say so.
  EXPECT_EQ(Value(std::string(200, ' ')), "\"" + std::string(128, ' ') + "...\"");
}

TEST(ReviewLogLine, FieldsOfAnOutcome) {
  ReviewOutcome out;
  out.uid = "u-1";
  out.namespace_name = "ray";
  out.pod_name = "head-";
  out.cluster = "c";
  out.looked_up_heads = true;
  out.decision.allowed = false;
  out.decision.denial.rule = "second-head";
  out.decision.warnings = {"w1", "w2"};
  std::string line;
  AppendReviewLogLine(ReviewLogFieldsOf(out, Endpoint::kValidate, 42), &line);
  EXPECT_EQ(line,
            "review path=/validate uid=u-1 namespace=ray pod=head- cluster=c decision=deny rule=second-head "
            "patch_ops=0 warnings=2 head_lookup=yes us=42");

  ReviewOutcome allowed;
  allowed.uid = "u-2";
  allowed.decision.patch.resize(4);
  line.clear();
  AppendReviewLogLine(ReviewLogFieldsOf(allowed, Endpoint::kMutate, 3), &line);
  EXPECT_EQ(line,
            "review path=/mutate uid=u-2 namespace=\"\" pod=\"\" cluster=\"\" decision=allow rule=- "
            "patch_ops=4 warnings=0 head_lookup=no us=3");
}

TEST(ReviewLogLine, AppendsWithoutClearing) {
  std::string line = "uid=";
  AppendLogValue("u1", &line);
  line += " next=";
  AppendLogValue("", &line);
  EXPECT_EQ(line, "uid=u1 next=\"\"");
}

}  // namespace
}  // namespace ray_webhook
