#include "ray_webhook/live_audit/cluster_audit.h"

#include <ctime>

#include "ray_webhook/audit/auditor.h"
#include "ray_webhook/kube/paged_list.h"

namespace ray_webhook {
namespace {

struct Collection {
  std::string_view group_version_path;  // "/api/v1", "/apis/ray.io/v1"
  std::string_view resource;
  std::string_view selector;
};

constexpr Collection kCollections[] = {
    {"/api/v1", "pods", kRayPodSelector},
    {"/apis/ray.io/v1", "rayclusters", ""},
    {"/apis/ray.io/v1", "rayjobs", ""},
    {"/apis/ray.io/v1", "rayservices", ""},
    // v1.7 and later; an older operator has no such resource, which the audit notes as not served.
    {"/apis/ray.io/v1", "raycronjobs", ""},
};

}  // namespace

Result<AuditReport> AuditCluster(KubeApiClient& client, const ClusterAuditScope& scope, const PolicyConfig& policy,
                                 const std::function<bool()>& stop) {
  Auditor auditor(policy, scope.cost_leak_limits);
  std::vector<std::string> notes;
  for (const Collection& c : kCollections) {
    ListRequest request;
    request.collection_path = std::string(c.group_version_path) +
                              (scope.namespace_name.empty() ? "" : "/namespaces/" + UrlEncode(scope.namespace_name)) +
                              "/" + std::string(c.resource);
    request.label_selector = std::string(c.selector);
    request.page_size = scope.page_size;
    request.page_timeout = scope.page_timeout;
    const std::string resource(c.resource);
    Result<bool> listed = ListPages(
        client, request,
        [&](std::string_view page, std::size_t number) {
          return auditor.AddDocument(page, "API " + resource + " page " + std::to_string(number));
        },
        stop);
    if (!listed.ok()) return listed.status();
    if (!*listed) notes.push_back(resource + ": not served by the Kubernetes API (KubeRay's CRDs not installed?)");
  }
  // The clock read once every page is in: a cluster deleted while the pages were read is not judged late.
  AuditReport report = auditor.Finish(static_cast<std::int64_t>(std::time(nullptr)));
  report.notes = std::move(notes);
  return report;
}

}  // namespace ray_webhook
