#include "ray_webhook/kube/kube_api_client.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "ray_webhook/core/decode/document_index.h"
#include "ray_webhook/core/decode/object_decoder.h"
#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/kube/https_get.h"
#include "ray_webhook/mutex.h"

namespace ray_webhook {
namespace {

// The token file, cached until its mtime or size changes.
class TokenFile {
 public:
  explicit TokenFile(std::string path) : path_(std::move(path)) {}

  Result<std::string> Read() EXCLUDES(mutex_) {
    if (path_.empty()) return std::string();
    struct stat st {};
    if (stat(path_.c_str(), &st) != 0) return Status::Error("cannot read the token file " + path_);
    MutexLock lock(&mutex_);
    if (!loaded_ || st.st_mtim.tv_sec != mtime_.tv_sec || st.st_mtim.tv_nsec != mtime_.tv_nsec || st.st_size != size_) {
      std::ifstream in(path_, std::ios::binary);
      if (!in) return Status::Error("cannot read the token file " + path_);
      std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
      token_ = std::move(token);
      mtime_ = st.st_mtim;
      size_ = st.st_size;
      loaded_ = true;
    }
    return token_;
  }

 private:
  const std::string path_;
  Mutex mutex_;
  bool loaded_ GUARDED_BY(mutex_) = false;
  timespec mtime_ GUARDED_BY(mutex_){};
  off_t size_ GUARDED_BY(mutex_) = 0;
  std::string token_ GUARDED_BY(mutex_);
};

}  // namespace

std::string ApiErrorMessage(const std::string& body) {
  // A metav1.Status: its message, else the start of whatever came.
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(body);
  simdjson::ondemand::document doc;
  std::string_view message;
  if (parser.iterate(padded).get(doc) == simdjson::SUCCESS &&
      doc.find_field_unordered("message").get_string().get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  return body.substr(0, 200);
}

std::string UrlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HeadPodList ParsePodList(std::string_view body) {
  // Far beyond a PodList's depth; bounds the scan of a hostile answer.
  constexpr std::size_t kMaxDepth = 128;
  DocumentIndex index;
  if (index.Read(body, kMaxDepth) != DocumentIndex::Shape::kObject ||
      index.items_shape() != DocumentIndex::Items::kList) {
    return Status::Error("the Kubernetes API answered with something that is not a PodList");
  }
  // Each head read by the object decoder admission uses, so that "live" means the same in both.
  ObjectDecoder decoder;
  Pod pod;
  std::vector<HeadPod> pods;
  for (const DocumentIndex::Outline& item : index.items()) {
    if (!item.object) continue;
    HeadPod p;
    p.name = std::string(item.name);
    // A Pod the decoder cannot read still counts, as live: a head left out could let a second one in.
    if (decoder.DecodePod(item.text, pod, item.readable_padding).ok()) {
      p.phase = std::string(pod.phase);
      p.terminating = pod.metadata.deletion_requested;
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

namespace {

// Where a call goes and the headers every call sends.
struct Request {
  HttpsTarget target;
  HttpHeaders headers;
};

}  // namespace

struct KubeApiClient::Impl {
  explicit Impl(KubeApiConfig c) : config(std::move(c)), token(config.token_file) {}
  KubeApiConfig config;
  TokenFile token;

  Result<Request> Prepare() {
    Result<std::string> bearer = token.Read();
    if (!bearer.ok()) return bearer.status();
    const std::optional<HttpsTarget> target = ParseHttpsUrl(config.server);
    if (!target) return Status::Error("the Kubernetes API address " + config.server + " is not usable");
    Request r{*target, {{"Accept", "application/json"}, {"User-Agent", "ray-webhook"}}};
    if (!bearer->empty()) r.headers.emplace_back("Authorization", "Bearer " + *bearer);
    return r;
  }
};

KubeApiClient::KubeApiClient(KubeApiConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
KubeApiClient::~KubeApiClient() = default;

const KubeApiConfig& KubeApiClient::config() const { return impl_->config; }

Result<KubeApiClient::Answer> KubeApiClient::Get(std::string_view path, std::chrono::milliseconds deadline,
                                                 std::size_t max_answer_bytes) {
  return Send("GET", path, {}, {}, deadline, max_answer_bytes);
}

Result<KubeApiClient::Answer> KubeApiClient::Send(std::string_view method, std::string_view path,
                                                  std::string_view content_type, std::string_view body,
                                                  std::chrono::milliseconds deadline, std::size_t max_answer_bytes) {
  const KubeApiConfig& c = impl_->config;
  const auto until = std::chrono::steady_clock::now() + deadline;
  Result<Request> request = impl_->Prepare();
  if (!request.ok()) return request.status();
  if (!content_type.empty()) request->headers.emplace_back("Content-Type", std::string(content_type));
  Result<HttpsAnswer> answer =
      HttpsRequest(request->target, method, path, request->headers, body, c.ca_file, until, max_answer_bytes);
  if (!answer.ok())
    return Status::Error("no answer from the Kubernetes API at " + c.server + " (" + answer.error() + ")");
  return Answer{answer->status, std::move(answer->body)};
}

StreamEnd KubeApiClient::Stream(std::string_view path, const StreamLimits& limits, const StreamLineSink& on_line,
                                const std::function<bool()>& stop) {
  Result<Request> request = impl_->Prepare();
  if (!request.ok()) {
    StreamEnd end;
    end.reason = request.error();
    return end;
  }
  StreamEnd end =
      HttpsStreamLines(request->target, path, request->headers, impl_->config.ca_file, limits, on_line, stop);
  if (end.how == StreamEnd::How::kBroken) {
    end.reason = "no answer from the Kubernetes API at " + impl_->config.server + " (" + end.reason + ")";
  }
  return end;
}

HeadPodList KubeApiClient::ListHeadPods(std::string_view namespace_name, std::string_view cluster,
                                        std::chrono::milliseconds deadline) {
  const std::string selector =
      std::string(kClusterLabel) + "=" + std::string(cluster) + "," + std::string(kNodeTypeLabel) + "=head";
  const std::string path =
      "/api/v1/namespaces/" + UrlEncode(namespace_name) + "/pods?labelSelector=" + UrlEncode(selector);
  // A RayCluster has one head, a few while one terminates: 16 MiB is far beyond any real list.
  Result<Answer> answer = Get(path, std::min(deadline, impl_->config.timeout), 16 * 1024 * 1024);
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) {
    return Status::Error("the Kubernetes API answered " + std::to_string(answer->status) + ": " +
                         ApiErrorMessage(answer->body));
  }
  return ParsePodList(answer->body);
}

}  // namespace ray_webhook
