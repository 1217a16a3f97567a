#include "ray_webhook/core/json/json_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "ray_webhook/core/model/pod_view.h"
#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;

TEST(JsonReader, ReadsEachTypeAndTakesNullAsAbsent) {
  BareObject bare;
  std::string_view s = "kept", absent = "kept";
  bool b = false, null_bool = true;
  std::vector<std::string_view> list;
  StringMap map;
  JsonReader r = bare.Walk(R"({"s":"a\"b\u00e9","n":null,"b":true,"nb":null,"l":["x","y"],"m":{"k":"v"}})",
                           [&](od::object root, JsonReader& r) {
                             r.Fields(root, [&](std::string_view key, od::value v) {
                               if (key == "s") r.String(v, "s", &s);
                               if (key == "n") r.String(v, "n", &absent);
                               if (key == "b") r.Bool(v, "b", &b);
                               if (key == "nb") r.Bool(v, "nb", &null_bool);
                               if (key == "l") r.Strings(v, "l", &list);
                               if (key == "m") r.Map(v, "m", &map);
                             });
                           });
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_EQ(s, "a\"b\xc3\xa9");  // unescaped
  EXPECT_EQ(absent, "kept");
  EXPECT_TRUE(b);
  EXPECT_TRUE(null_bool);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1], "y");
  ASSERT_EQ(map.size(), 1u);
  EXPECT_EQ(Lookup(map, "k"), "v");
}

TEST(JsonReader, AWrongTypeIsReportedAtItsPathAndTheFirstFailureWins) {
  BareObject bare;
  std::string_view s;
  int visited = 0;
  JsonReader r = bare.Walk(R"({"a":1,"b":2})", [&](od::object root, JsonReader& r) {
    r.Fields(root, [&](std::string_view key, od::value v) {
      ++visited;
      r.String(v, key == "a" ? "x.a" : "x.b", &s);
    });
  });
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.json_error(), simdjson::SUCCESS);
  EXPECT_EQ(r.error(), "x.a: expected a string");
  EXPECT_EQ(visited, 1);  // the walk stops at the failure
  r.Fail("y", "later");
  EXPECT_EQ(r.error(), "x.a: expected a string");
}

TEST(JsonReader, EachAccessorNamesTheTypeItExpected) {
  BareObject bare;
  const std::pair<const char*, const char*> cases[] = {{R"({"v":1})", "v: expected a string"},
                                                       {R"({"v":"x"})", "v: expected a boolean"},
                                                       {R"({"v":[]})", "v: expected an object"},
                                                       {R"({"v":{}})", "v: expected an array"},
                                                       {R"({"v":[1]})", "v: expected an array of strings"},
                                                       {R"({"v":{"k":1}})", "v: expected string values"},
                                                       {R"({"v":[1]})", "v: expected objects"}};
  int n = 0;
  for (const auto& [json, want] : cases) {
    SCOPED_TRACE(json);
    const int which = n++;
    JsonReader r = bare.Walk(json, [&](od::object root, JsonReader& r) {
      r.Fields(root, [&](std::string_view, od::value v) {
        std::string_view s;
        bool b;
        od::object o;
        od::array a;
        std::vector<std::string_view> l;
        StringMap m;
        switch (which) {
          case 0: return r.String(v, "v", &s);
          case 1: return r.Bool(v, "v", &b);
          case 2: r.Object(v, "v", &o); return;
          case 3: r.Array(v, "v", &a); return;
          case 4: return r.Strings(v, "v", &l);
          case 5: return r.Map(v, "v", &m);
          default:
            if (r.Array(v, "v", &a)) r.Objects(a, "v", "expected objects", [](od::object) {});
        }
      });
    });
    EXPECT_EQ(r.error(), want);
  }
}

// Go's encoding/json: the last of a repeated key counts.
TEST(JsonReader, ARepeatedKeyIsVisitedAgain) {
  BareObject bare;
  std::string_view s;
  JsonReader r = bare.Walk(R"({"k":"first","k":"last"})", [&](od::object root, JsonReader& r) {
    r.Fields(root, [&](std::string_view, od::value v) { r.String(v, "k", &s); });
  });
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_EQ(s, "last");
}

TEST(JsonReader, PrefixTouchesOnlyAFailureAndAdoptKeepsTheFirst) {
  JsonReader ok;
  ok.Prefix("request.object.");
  EXPECT_FALSE(ok.failed());
  EXPECT_EQ(ok.error(), "");

  JsonReader inner;
  inner.Fail("spec", "expected an object");
  inner.Prefix("request.object.");
  EXPECT_EQ(inner.error(), "request.object.spec: expected an object");

  JsonReader outer;
  outer.Adopt(ok);
  EXPECT_FALSE(outer.failed());
  outer.Adopt(inner);
  EXPECT_EQ(outer.error(), "request.object.spec: expected an object");
  JsonReader other;
  other.Ok(simdjson::TAPE_ERROR);
  outer.Adopt(other);
  EXPECT_EQ(outer.json_error(), simdjson::SUCCESS);
}

TEST(JsonReader, InvalidJsonInWhatIsReadIsAJsonError) {
  BareObject bare;
  bool b = false;
  JsonReader r = bare.Walk(R"({"a":true,"b":tru})", [&](od::object root, JsonReader& r) {
    r.Fields(root, [&](std::string_view, od::value v) { r.Bool(v, "v", &b); });
  });
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.json_error(), simdjson::SUCCESS);
  EXPECT_EQ(r.error(), "");
}

}  // namespace
}  // namespace ray_webhook
