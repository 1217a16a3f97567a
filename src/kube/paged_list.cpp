#include "ray_webhook/kube/paged_list.h"

#include <limits>

#include "ray_webhook/core/decode/document_index.h"

namespace ray_webhook {
namespace {

// The outline reads no deeper than an item's metadata, so it needs no bound; the sink bounds the
// objects it walks.
constexpr std::size_t kAnyDepth = std::numeric_limits<std::size_t>::max();

}  // namespace

Result<bool> ListPages(KubeApiClient& client, const ListRequest& request, const PageSink& on_page,
                       const std::function<bool()>& stop) {
  std::string continue_token;
  DocumentIndex index;
  for (std::size_t number = 1;; ++number) {
    if (stop && stop()) return Status::Error("stopped");
    if (number > request.max_pages) {
      return Status::Error(request.collection_path + ": more than " + std::to_string(request.max_pages) + " pages");
    }
    std::string path = request.collection_path + "?limit=" + std::to_string(request.page_size);
    if (!request.label_selector.empty()) path += "&labelSelector=" + UrlEncode(request.label_selector);
    if (!continue_token.empty()) path += "&continue=" + UrlEncode(continue_token);
    Result<KubeApiClient::Answer> answer = client.Get(path, request.page_timeout, request.max_page_bytes);
    if (!answer.ok()) return Status::Error("listing " + request.collection_path + ": " + answer.error());
    if (answer->status == 404 && number == 1) return false;
    if (answer->status != 200) {
      std::string why = "listing " + request.collection_path + ": the Kubernetes API answered " +
                        std::to_string(answer->status) + ": " + ApiErrorMessage(answer->body);
      if (answer->status == 410) why += " (the list expired while it was read page by page; run again)";
      return Status::Error(why);
    }
    // An outline of the page, not a parse of its objects: the sink parses those, once.
    const std::string& page = answer->body;
    if (index.Read(page, kAnyDepth) != DocumentIndex::Shape::kObject ||
        index.items_shape() == DocumentIndex::Items::kAbsent) {
      return Status::Error("listing " + request.collection_path + ": the answer is not a list");
    }
    continue_token = index.continue_token();
    if (Status s = on_page(page, number); !s.ok()) return s;
    if (continue_token.empty()) return true;
  }
}

}  // namespace ray_webhook
