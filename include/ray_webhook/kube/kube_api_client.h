// KubeApiClient: the Kubernetes API calls of ray-webhook: listing the head
// Pods of a RayCluster (every head review), any GET (the audit's lists,
// ListPages in paged_list.h), a streamed GET (a watch, ListThenWatch in
// list_watch.h), and any other call with a body (the audit's policy reports,
// ReportWriter).
//
// Contract: GET /api/v1/namespaces/NS/pods?labelSelector=ray.io/cluster=C,ray.io/node-type=head
// over HTTPS with TLS verification always on (the configured CA, read anew
// for each call), a bearer token read from a file and re-read whenever the
// file changes (bound service-account tokens rotate), and one deadline for
// the whole call (HttpsRequest): the configured timeout, or less. Never
// throws: every failure (connect, TLS, timeout, non-200, bad body) comes back
// as an error with a one-line reason. Safe to call from many
// threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/kube/https_stream.h"

namespace ray_webhook {

struct KubeApiConfig {
  std::string server;      // "https://host:port" ("https://[v6]:port"); empty means not configured
  std::string token_file;  // bearer token; may be empty (no Authorization header)
  std::string ca_file;     // PEM bundle that signs the API server's certificate
  std::chrono::milliseconds timeout{2000};

  bool configured() const { return !server.empty(); }
};

// In-cluster defaults, as client-go's rest.InClusterConfig builds them:
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, and the service
// account's token and CA. nullopt outside a cluster.
inline constexpr std::string_view kServiceAccountTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token";
inline constexpr std::string_view kServiceAccountCaFile = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

class KubeApiClient {
 public:
  explicit KubeApiClient(KubeApiConfig config);
  ~KubeApiClient();
  KubeApiClient(const KubeApiClient&) = delete;
  KubeApiClient& operator=(const KubeApiClient&) = delete;

  // deadline: at most this long for the whole call (never more than the configured timeout).
  HeadPodList ListHeadPods(std::string_view namespace_name, std::string_view cluster,
                           std::chrono::milliseconds deadline = std::chrono::milliseconds::max());

  // GET of path (with its query) within deadline, refusing an answer over
  // max_answer_bytes. Any status comes back as an answer; only a failed
  // exchange is an error.
  struct Answer {
    int status = 0;
    std::string body;
  };
  Result<Answer> Get(std::string_view path, std::chrono::milliseconds deadline, std::size_t max_answer_bytes);
  // METHOD of path with BODY of CONTENT_TYPE (none when empty), as Get.
  Result<Answer> Send(std::string_view method, std::string_view path, std::string_view content_type,
                      std::string_view body, std::chrono::milliseconds deadline, std::size_t max_answer_bytes);
  // A GET of path whose answer is handed on line by line (HttpsStreamLines):
  // the same server, CA and token as Get; the limits are the caller's, since
  // a watch outlives any single call's timeout. A token that cannot be read
  // or a server address that is not usable is kBroken.
  StreamEnd Stream(std::string_view path, const StreamLimits& limits, const StreamLineSink& on_line,
                   const std::function<bool()>& stop = {});

  const KubeApiConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes a query value (RFC 3986 unreserved characters pass as is).
std::string UrlEncode(std::string_view value);

// The message of a metav1.Status body, else the body's first 200 bytes.
std::string ApiErrorMessage(const std::string& body);

// Reads a PodList body; an error when it is not one.
HeadPodList ParsePodList(std::string_view body);

}  // namespace ray_webhook
