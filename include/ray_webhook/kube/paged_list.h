// ListPages: one collection of the Kubernetes API, read page by page.
//
// Contract: GETs collection_path?limit=N[&labelSelector=S][&continue=T] as
// kube-apiserver's chunked lists want (API concepts, "Retrieving large
// results sets in chunks"), following metadata.continue until it is empty,
// and hands each page's JSON text to on_page before the next is asked for, so
// at most one page is held. The page is not parsed here: an outline of it
// (the core's DocumentIndex) tells a list and reads metadata.continue. Each GET has its own deadline and size bound.
// Stops with an error on any status but 200 (saying which, and for 410 Gone
// that the list's snapshot expired while paging), on a body that is not a
// list, on more than max_pages pages, or when on_page or stop says so.
// A 404 means the resource is not served (a CRD that is not installed): the
// result is then false, and true when every page was read. Never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/kube_api_client.h"

namespace ray_webhook {

struct ListRequest {
  std::string collection_path;  // "/api/v1/pods", "/apis/ray.io/v1/namespaces/team-a/rayclusters"
  std::string label_selector;   // may be empty
  std::size_t page_size = 500;
  std::chrono::milliseconds page_timeout{30000};
  std::size_t max_page_bytes = 64 * 1024 * 1024;
  std::size_t max_pages = 100000;
};

using PageSink = std::function<Status(std::string_view page, std::size_t number)>;

Result<bool> ListPages(KubeApiClient& client, const ListRequest& request, const PageSink& on_page,
                       const std::function<bool()>& stop = {});

}  // namespace ray_webhook
