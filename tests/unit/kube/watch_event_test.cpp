#include "kube/watch_event.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ray_webhook {
namespace {

TEST(WatchEventReaderTest, ReadsTypeVersionAndTheObjectsOwnTextInEitherOrder) {
  WatchEventReader reader;
  const std::string object = R"({"kind":"Pod","metadata":{"name":"a","resourceVersion":"42"},"spec":{"x":[1,2]}})";
  for (const std::string& line :
       {R"({"type":"MODIFIED","object":)" + object + "}", R"( {"object":)" + object + R"(, "type":"MODIFIED"} )"}) {
    Result<WatchEvent> event = reader.ReadEvent(line);
    ASSERT_TRUE(event.ok()) << line << ": " << event.error();
    EXPECT_EQ(event->type, WatchEventType::kModified);
    EXPECT_EQ(event->object, object);
    EXPECT_EQ(event->resource_version, "42");
  }
}

TEST(WatchEventReaderTest, ReadsAnErrorEventsStatus) {
  WatchEventReader reader;
  Result<WatchEvent> event = reader.ReadEvent(
      R"({"type":"ERROR","object":{"kind":"Status","metadata":{},"message":"too old","reason":"Expired","code":410}})");
  ASSERT_TRUE(event.ok()) << event.error();
  EXPECT_EQ(event->type, WatchEventType::kError);
  EXPECT_EQ(event->status_code, 410);
  EXPECT_EQ(event->status_message, "too old");
  EXPECT_EQ(event->resource_version, "");
}

TEST(WatchEventReaderTest, RefusesWhatIsNotAnEvent) {
  WatchEventReader reader;
  for (const char* bad : {"garbage", "[]", R"({"type":"ADDED"})", R"({"object":{}})", R"({"type":"NEW","object":{}})",
                          R"({"type":1,"object":{}})", R"({"type":"ADDED","object":[]})",
                          R"({"type":"ADDED","object":{"a":})", R"({"type":"ADDED","object":{}} trailing)"}) {
    EXPECT_FALSE(reader.ReadEvent(bad).ok()) << bad;
  }
}

TEST(WatchEventReaderTest, ReadsAListPagesItemsAndMetadata) {
  WatchEventReader reader;
  std::vector<std::string> items;
  Result<ListPageMeta> page =
      reader.ReadListPage(R"({"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],)"
                          R"("metadata":{"resourceVersion":"7","continue":"next"}})",
                          [&](std::string_view item) { items.emplace_back(item); });
  ASSERT_TRUE(page.ok()) << page.error();
  EXPECT_EQ(items, (std::vector<std::string>{R"({"metadata":{"name":"a"}})", R"({"metadata":{"name":"b"}})"}));
  EXPECT_EQ(page->resource_version, "7");
  EXPECT_EQ(page->continue_token, "next");
  EXPECT_EQ(page->items, 2u);
  EXPECT_FALSE(reader.ReadListPage(R"({"kind":"Status"})", [](std::string_view) {}).ok());
  EXPECT_TRUE(reader.ReadListPage(R"({"items":null,"metadata":{}})", [](std::string_view) {}).ok());
}

}  // namespace
}  // namespace ray_webhook
