// WatchEventReader: the Kubernetes API's watch events and list pages read
// with simdjson, once each, handing on each object's own JSON text so that
// its consumer decodes it once more and no more (the core's decoders).
//
// Contract: ReadEvent() takes one line of a watch ({"type": ..., "object":
// {...}}, in either order) and gives its type, the raw text of "object", that
// object's metadata.resourceVersion, and for an ERROR event the code and
// message of the metav1.Status it carries. A line that is not JSON, an event
// without a type or an object, or a type the API does not send is an error
// saying which. ReadListPage() walks a list answer's items, handing each
// item's raw text to on_item in order, and returns the list's
// metadata.resourceVersion and metadata.continue; a body without "items" is
// no list. Every string_view handed out points into the reader's buffers and
// is valid until its next call. Internal to the kube layer; one reader serves
// one thread. Never throws.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/list_watch.h"

namespace ray_webhook {

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string_view object;            // raw JSON of the object
  std::string_view resource_version;  // empty when the object has none
  std::int64_t status_code = 0;       // an ERROR event's Status code
  std::string_view status_message;    // and message
};

struct ListPageMeta {
  std::string resource_version;
  std::string continue_token;
  std::size_t items = 0;
};

class WatchEventReader {
 public:
  Result<WatchEvent> ReadEvent(std::string_view line);
  Result<ListPageMeta> ReadListPage(std::string_view body, const std::function<void(std::string_view item)>& on_item);

 private:
  // Copies text behind simdjson's padding; the returned view is the copy.
  simdjson::padded_string_view Pad(std::string_view text);
  // TRAILING_CONTENT when the walked document is followed by more than whitespace.
  simdjson::error_code CheckEnd(simdjson::ondemand::document& doc) const;

  simdjson::ondemand::parser parser_;
  std::string buffer_;
};

}  // namespace ray_webhook
