// mock-kube-api: a stand-in for kube-apiserver's pods list, its chunked lists
// and its watches, for tests of KubeApiClient, the audit and ListWatch.
//
//   mock-kube-api --port N --tls-cert FILE --tls-key FILE --token TOKEN (--pods FILE | --objects FILE)...
//                 [--watch-script FILE] [--log FILE] [--bind ADDR]
//
// Serves HTTPS on ADDR:N (127.0.0.1 unless --bind says otherwise, e.g. ::1) and prints "listening" on stdout once the
// port is bound. One route, GET /api/v1/namespaces/NS/pods, answered like kube-apiserver:
//   - "Authorization: Bearer TOKEN" must match exactly, else 401 Unauthorized;
//   - labelSelector must be exactly "ray.io/cluster=C,ray.io/node-type=head",
//     else 400 BadRequest saying what was wrong;
//   - then the entry "NS/C" of the pods FILE (a JSON object) decides:
//       {"items": [...]}    200 with a PodList holding those items
//       {"status": CODE}    CODE with a metav1.Status body ("message" overrides its text)
//       {"hang_ms": N}      sleep N ms first, then as above (an empty PodList by default)
//       {"trickle_ms": N}   a 200 PodList sent one byte every N ms (chunked), so
//                           that no single read ever waits long
//       no entry            200 with an empty PodList
// With --objects FILE ({"items": [objects as kubectl get -o json prints them],
// "unserved": ["rayjobs", ...]}), the audit's lists are served as well, like
// kube-apiserver's chunked lists: GET /api/v1/pods,
// /api/v1/namespaces/NS/pods (when the labelSelector is not the head
// lookup's), /apis/ray.io/v1/[namespaces/NS/]rayclusters|rayjobs|rayservices
// and /apis/apps/v1/[namespaces/NS/]deployments,
// filtered by namespace and by a labelSelector of "key", "key=value" and
// "key in (a,b)" terms, `limit` items at a time with metadata.continue (an
// offset), items without kind and apiVersion as the API sends them; an
// "unserved" resource is 404 NotFound (its CRD is not installed), and a
// continue token that is not one is 410 Expired. Each list's
// metadata.resourceVersion is 12345, or the version of the last object a
// watch script applied.
// A GET of those collections with watch=1 (or true) is a watch: without
// --watch-script FILE one that hangs, sending nothing; with one, played from the script
// (tests/tools/mock_kube_watch.h): its events as newline-delimited JSON over chunked transfer, changes to the objects
// made while no watch runs, garbage and over-long lines, pauses, hangs, a status such as 410 instead of a stream, and
// the stream's end. Any other path is 404. Each request appends one line to the --log FILE:
//   METHOD PATH selector=DECODED_SELECTOR auth=ok|bad[ watch=1 resourceVersion=RV]
// (the last two for a watch only).
// SIGTERM or SIGINT stops the server (sleeping requests wake up) and exits 0.
#include <httplib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mock_kube_watch.h"

namespace {

using Json = nlohmann::ordered_json;

constexpr char kJson[] = "application/json";
constexpr char kPodsPath[] = R"(/api/v1/namespaces/([^/]+)/pods)";
constexpr std::string_view kClusterKey = "ray.io/cluster=";
constexpr std::string_view kHeadSuffix = ",ray.io/node-type=head";

struct Options {
  int port = 0;
  std::string tls_cert;
  std::string tls_key;
  std::string token;
  std::string pods;
  std::string objects;
  std::string watch_script;
  std::string log;
  std::string bind = "127.0.0.1";
};

void Usage() {
  std::cerr
      << "usage: mock-kube-api --port N --tls-cert FILE --tls-key FILE --token TOKEN (--pods FILE | --objects FILE) "
         "[--watch-script FILE] [--log FILE] [--bind ADDR]\n";
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  std::map<std::string, std::string*> strings = {{"--tls-cert", &o.tls_cert}, {"--tls-key", &o.tls_key},
                                                 {"--token", &o.token},       {"--pods", &o.pods},
                                                 {"--objects", &o.objects},   {"--log", &o.log},
                                                 {"--bind", &o.bind},         {"--watch-script", &o.watch_script}};
  std::string port;
  strings["--port"] = &port;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto it = strings.find(flag);
    if (it == strings.end() || i + 1 >= argc) {
      std::cerr << "mock-kube-api: " << (it == strings.end() ? "unknown flag " : "missing value for ") << flag << "\n";
      return std::nullopt;
    }
    *it->second = argv[++i];
  }
  try {
    std::size_t used = 0;
    o.port = std::stoi(port, &used);
    if (used != port.size() || o.port < 1 || o.port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    std::cerr << "mock-kube-api: --port must be 1..65535\n";
    return std::nullopt;
  }
  if (o.tls_cert.empty() || o.tls_key.empty() || o.token.empty() || (o.pods.empty() && o.objects.empty())) {
    std::cerr << "mock-kube-api: --tls-cert, --tls-key, --token and --pods or --objects are required\n";
    return std::nullopt;
  }
  return o;
}

std::string ReasonFor(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";  // metav1.StatusReasonUnknown
  }
}

// A metav1.Status body, in kube-apiserver's field order.
void SetStatus(httplib::Response& res, int code, const std::string& message, const Json* details = nullptr) {
  Json s;
  s["kind"] = "Status";
  s["apiVersion"] = "v1";
  s["metadata"] = Json::object();
  s["status"] = "Failure";
  s["message"] = message;
  s["reason"] = ReasonFor(code);
  if (details) s["details"] = *details;
  s["code"] = code;
  res.status = code;
  res.set_content(s.dump(), kJson);
}

void SetPodList(httplib::Response& res, const Json& items) {
  Json list;
  list["kind"] = "PodList";
  list["apiVersion"] = "v1";
  list["metadata"] = {{"resourceVersion", "12345"}};
  list["items"] = items;
  res.status = 200;
  res.set_content(list.dump(), kJson);
}

// The default message kube-apiserver gives for a status code on a pods list.
std::string DefaultMessage(int code, const std::string& ns) {
  switch (code) {
    case 403:
      return "pods is forbidden: User \"system:serviceaccount:ray-webhook-system:ray-webhook\" cannot list resource "
             "\"pods\" in API group \"\" in the namespace \"" +
             ns + "\"";
    case 500: return "Internal error occurred: etcdserver: request timed out";
    case 503: return "the server is currently unable to handle the request";
    case 429: return "too many requests, please try again later";
    default: return "mock-kube-api: status " + std::to_string(code);
  }
}

// cpp-httplib 0.11 listens with a backlog of 5 and hides its socket. A burst
// of more concurrent connects than that overflows the accept queue, and the
// dropped SYNs are retried a second later: a client with a 1 s deadline then
// sees a connect timeout that kube-apiserver (backlog SOMAXCONN) would never
// cause. Find the listening socket among our descriptors and listen again
// with a full backlog, which Linux applies to a socket already listening.
void RaiseBacklog(int port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_in addr{};
    socklen_t alen = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0 || addr.sin_family != AF_INET ||
        ntohs(addr.sin_port) != port) {
      continue;
    }
    listen(fd, SOMAXCONN);
  }
}

class MockKubeApi {
 public:
  MockKubeApi(Options options, Json pods, Json objects, Json watch_script)
      : options_(std::move(options)),
        pods_(std::move(pods)),
        objects_(std::move(objects)),
        watches_(std::move(watch_script)),
        server_(options_.tls_cert.c_str(), options_.tls_key.c_str()) {}

  bool Start(std::string* error) {
    if (!server_.is_valid()) {
      *error = "cannot load the TLS certificate " + options_.tls_cert + " and key " + options_.tls_key;
      return false;
    }
    if (!options_.log.empty()) {
      log_.open(options_.log, std::ios::app);
      if (!log_) {
        *error = "cannot open the log " + options_.log;
        return false;
      }
    }
    // httplib's default sets SO_REUSEPORT, which lets a second process share a
    // busy port silently; without it a busy port fails to bind, and the caller
    // picks another.
    server_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server_.new_task_queue = [] { return new httplib::ThreadPool(16); };
    Routes();
    if (!server_.bind_to_port(options_.bind, options_.port)) {
      *error = "cannot listen on " + options_.bind + ":" + std::to_string(options_.port);
      return false;
    }
    RaiseBacklog(options_.port);
    return true;
  }

  bool Serve() { return server_.listen_after_bind(); }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    // stop() is a no-op until the listen loop runs; a signal right after start must not be lost.
    for (int i = 0; i < 500 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server_.stop();
  }

 private:
  // The values of one query parameter, split as Go's url.ParseQuery does
  // (at the first '=' of each '&'-separated pair, then percent-decoded).
  // httplib's own get_param_value splits at every '=', so an unencoded
  // "labelSelector=ray.io/cluster=a,..." would lose its head there, while
  // kube-apiserver reads it fine.
  static std::vector<std::string> QueryValues(const httplib::Request& req, std::string_view key) {
    std::vector<std::string> values;
    std::string_view target = req.target;
    const std::size_t q = target.find('?');
    if (q == std::string_view::npos) return values;
    std::string_view query = target.substr(q + 1);
    query = query.substr(0, query.find('#'));
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      const std::size_t eq = pair.find('=');
      const std::string name = httplib::detail::decode_url(std::string(pair.substr(0, eq)), true);
      if (name != key) continue;
      values.push_back(eq == std::string_view::npos
                           ? std::string()
                           : httplib::detail::decode_url(std::string(pair.substr(eq + 1)), true));
    }
    return values;
  }

  static bool IsWatch(const httplib::Request& req) {
    const std::vector<std::string> watch = QueryValues(req, "watch");
    return !watch.empty() && (watch.front() == "1" || watch.front() == "true");
  }

  void Watch(httplib::Response& res, const std::string& resource) {
    mock_kube_api::WatchScript::Hooks hooks;
    hooks.hang = [this](long long ms) { return Hang(ms); };
    hooks.apply = [this](const std::string& type, const Json& object) {
      std::lock_guard<std::mutex> lock(objects_mutex_);
      mock_kube_api::ApplyChange(type, object, &objects_, &list_version_);
    };
    hooks.set_status = [](httplib::Response& r, int code) {
      SetStatus(r, code,
                code == 410 ? "too old resource version: 1 (100)" : "mock-kube-api: status " + std::to_string(code));
    };
    watches_.Answer(res, resource, hooks);
  }

  bool Authorized(const httplib::Request& req) const {
    return req.get_header_value_count("Authorization") == 1 &&
           req.get_header_value("Authorization") == "Bearer " + options_.token;
  }

  void Log(const httplib::Request& req) {
    if (!log_.is_open()) return;
    const std::vector<std::string> selectors = QueryValues(req, "labelSelector");
    const std::string selector = selectors.empty() ? "" : selectors.front();
    std::string watch;
    if (IsWatch(req)) {
      const std::vector<std::string> versions = QueryValues(req, "resourceVersion");
      watch = " watch=1 resourceVersion=" + (versions.empty() ? std::string() : versions.front());
    }
    std::lock_guard<std::mutex> lock(log_mutex_);
    log_ << req.method << ' ' << req.path << " selector=" << selector << " auth=" << (Authorized(req) ? "ok" : "bad")
         << watch << std::endl;
  }

  // Sleeps up to ms; false when the server is stopping.
  bool Hang(long long ms) {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    return !stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  }

  void ListPods(const httplib::Request& req, httplib::Response& res) {
    const std::string ns = req.matches[1];
    if (!Authorized(req)) {
      SetStatus(res, 401, "Unauthorized");
      return;
    }
    const std::vector<std::string> selectors = QueryValues(req, "labelSelector");
    const std::size_t count = selectors.size();
    if (count == 0 && !objects_.is_null()) {
      ListObjects(req, res, "pods", ns);
      return;
    }
    if (count != 1) {
      SetStatus(res, 400,
                count == 0 ? "labelSelector is missing; want ray.io/cluster=NAME,ray.io/node-type=head"
                           : "labelSelector is given " + std::to_string(count) + " times; want it once");
      return;
    }
    const std::string& selector = selectors.front();
    if (!objects_.is_null() && selector.find("node-type=head") == std::string::npos) {
      ListObjects(req, res, "pods", ns);
      return;
    }
    const std::string_view s = selector;
    const bool shape = s.size() > kClusterKey.size() + kHeadSuffix.size() &&
                       s.substr(0, kClusterKey.size()) == kClusterKey &&
                       s.substr(s.size() - kHeadSuffix.size()) == kHeadSuffix;
    const std::string cluster =
        shape ? std::string(s.substr(kClusterKey.size(), s.size() - kClusterKey.size() - kHeadSuffix.size())) : "";
    if (!shape || cluster.find_first_of(",=!() ") != std::string::npos) {
      SetStatus(
          res, 400,
          "unexpected labelSelector \"" + selector + "\"; want exactly ray.io/cluster=NAME,ray.io/node-type=head");
      return;
    }

    const std::string key = ns + "/" + cluster;
    auto it = pods_.find(key);
    if (it == pods_.end()) {
      SetPodList(res, Json::array());
      return;
    }
    const Json& entry = *it;
    if (!entry.is_object()) {
      SetStatus(res, 500, "mock-kube-api: the pods file entry " + key + " is not an object");
      return;
    }
    if (auto h = entry.find("hang_ms"); h != entry.end() && h->is_number_integer()) {
      if (!Hang(h->get<long long>())) {
        SetStatus(res, 503, "mock-kube-api is shutting down");
        return;
      }
    }
    if (auto t = entry.find("trickle_ms"); t != entry.end() && t->is_number_integer()) {
      auto body = std::make_shared<std::string>(
          Json{{"kind", "PodList"}, {"apiVersion", "v1"}, {"items", Json::array()}}.dump());
      const auto pause = std::chrono::milliseconds(t->get<long long>());
      res.set_chunked_content_provider(kJson, [this, body, pause](size_t offset, httplib::DataSink& sink) {
        if (offset >= body->size()) {
          sink.done();
          return true;
        }
        if (!Hang(pause.count())) return false;
        return sink.write(body->data() + offset, 1);
      });
      return;
    }
    if (auto st = entry.find("status"); st != entry.end() && st->is_number_integer()) {
      const int code = st->get<int>();
      auto m = entry.find("message");
      const std::string message = m != entry.end() && m->is_string() ? m->get<std::string>() : DefaultMessage(code, ns);
      if (code == 403) {
        const Json details = {{"kind", "pods"}};
        SetStatus(res, code, message, &details);
      } else {
        SetStatus(res, code, message);
      }
      return;
    }
    auto items = entry.find("items");
    SetPodList(res, items != entry.end() && items->is_array() ? *items : Json::array());
  }

  // One term of a label selector: "key", "key=value" or "key in (a,b)".
  static bool Matches(const Json& labels, std::string_view term) {
    auto trim = [](std::string_view t) {
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
      return t;
    };
    term = trim(term);
    auto label = [&](std::string_view key) -> const Json* {
      if (!labels.is_object()) return nullptr;
      auto it = labels.find(std::string(key));
      return it != labels.end() && it->is_string() ? &*it : nullptr;
    };
    if (const std::size_t in = term.find(" in ("); in != std::string_view::npos && term.back() == ')') {
      const Json* v = label(trim(term.substr(0, in)));
      if (!v) return false;
      std::string_view values = term.substr(in + 5, term.size() - in - 6);
      while (!values.empty()) {
        const std::size_t comma = values.find(',');
        if (trim(values.substr(0, comma)) == v->get<std::string>()) return true;
        values = comma == std::string_view::npos ? std::string_view() : values.substr(comma + 1);
      }
      return false;
    }
    if (const std::size_t eq = term.find('='); eq != std::string_view::npos) {
      const Json* v = label(trim(term.substr(0, eq)));
      return v && v->get<std::string>() == trim(term.substr(eq + 1));
    }
    return label(term) != nullptr;
  }

  // Splits a selector at the commas outside parentheses.
  static bool Selects(const Json& labels, std::string_view selector) {
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= selector.size(); ++i) {
      if (i < selector.size() && selector[i] == '(') ++depth;
      if (i < selector.size() && selector[i] == ')') --depth;
      if (i == selector.size() || (selector[i] == ',' && depth == 0)) {
        const std::string_view term = selector.substr(start, i - start);
        if (!term.empty() && !Matches(labels, term)) return false;
        start = i + 1;
      }
    }
    return true;
  }

  void ListObjects(const httplib::Request& req, httplib::Response& res, const std::string& resource,
                   const std::string& ns) {
    if (!Authorized(req)) {
      SetStatus(res, 401, "Unauthorized");
      return;
    }
    if (IsWatch(req)) {
      Watch(res, resource);
      return;
    }
    Json objects;
    std::string list_version;
    {
      std::lock_guard<std::mutex> lock(objects_mutex_);
      objects = objects_;
      list_version = list_version_;
    }
    if (auto unserved = objects.find("unserved"); unserved != objects.end() && unserved->is_array()) {
      for (const Json& u : *unserved) {
        if (u == resource) {
          SetStatus(res, 404, "the server could not find the requested resource");
          return;
        }
      }
    }
    static const std::map<std::string, std::pair<std::string, std::string>> kKinds = {
        {"pods", {"Pod", "v1"}},
        {"rayclusters", {"RayCluster", "ray.io/v1"}},
        {"rayjobs", {"RayJob", "ray.io/v1"}},
        {"rayservices", {"RayService", "ray.io/v1"}},
        {"deployments", {"Deployment", "apps/v1"}}};
    const auto& [kind, api_version] = kKinds.at(resource);
    const std::vector<std::string> selectors = QueryValues(req, "labelSelector");
    const std::string selector = selectors.empty() ? "" : selectors.front();
    const std::vector<std::string> limits = QueryValues(req, "limit");
    const std::vector<std::string> continues = QueryValues(req, "continue");
    std::size_t limit = 0, offset = 0;
    try {
      if (!limits.empty()) limit = std::stoul(limits.front());
      if (!continues.empty()) {
        if (!continues.front().starts_with("offset-")) throw std::invalid_argument("continue");
        offset = std::stoul(continues.front().substr(7));
      }
    } catch (const std::exception&) {
      SetStatus(res, 410, "The provided continue parameter is too old to display a consistent list result.");
      return;
    }
    Json matching = Json::array();
    for (const Json& item : objects.value("items", Json::array())) {
      if (item.value("kind", "") != kind) continue;
      const Json& meta = item.contains("metadata") ? item["metadata"] : Json::object();
      if (!ns.empty() && meta.value("namespace", "") != ns) continue;
      if (!Selects(meta.contains("labels") ? meta["labels"] : Json::object(), selector)) continue;
      Json bare = item;
      bare.erase("kind");
      bare.erase("apiVersion");
      matching.push_back(std::move(bare));
    }
    Json page = Json::array();
    for (std::size_t i = offset; i < matching.size() && (limit == 0 || page.size() < limit); ++i) {
      page.push_back(matching[i]);
    }
    Json list;
    list["kind"] = kind + "List";
    list["apiVersion"] = api_version;
    list["metadata"] = {{"resourceVersion", list_version}};
    if (offset + page.size() < matching.size()) {
      list["metadata"]["continue"] = "offset-" + std::to_string(offset + page.size());
      list["metadata"]["remainingItemCount"] = matching.size() - offset - page.size();
    }
    list["items"] = std::move(page);
    res.status = 200;
    res.set_content(list.dump(), kJson);
  }

  void Routes() {
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      Log(req);
      static const std::regex pods(kPodsPath);
      if (req.method != "GET" && std::regex_match(req.path, pods)) {
        res.set_header("Allow", "GET");
        SetStatus(res, 405, "the server does not allow this method on the requested resource");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.Get(kPodsPath, [this](const httplib::Request& req, httplib::Response& res) { ListPods(req, res); });
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      if (objects_.is_null()) {
        SetStatus(res, 404, "the server could not find the requested resource");
        return;
      }
      ListObjects(req, res, "pods", "");
    });
    server_.Get(R"(/apis/ray\.io/v1/(?:namespaces/([^/]+)/)?(rayclusters|rayjobs|rayservices))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (objects_.is_null()) {
                    SetStatus(res, 404, "the server could not find the requested resource");
                    return;
                  }
                  ListObjects(req, res, req.matches[2], req.matches[1]);
                });
    server_.Get(R"(/apis/apps/v1/(?:namespaces/([^/]+)/)?(deployments))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (objects_.is_null()) {
                    SetStatus(res, 404, "the server could not find the requested resource");
                    return;
                  }
                  ListObjects(req, res, req.matches[2], req.matches[1]);
                });
    // Called for every status >= 400; fill in only answers that have no body yet.
    server_.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      SetStatus(res, res.status,
                res.status == 404 ? "the server could not find the requested resource"
                                  : "mock-kube-api: status " + std::to_string(res.status));
      return httplib::Server::HandlerResponse::Handled;
    }));
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      SetStatus(res, 500, "mock-kube-api: " + what);
    });
  }

  Options options_;
  Json pods_;
  std::mutex objects_mutex_;
  Json objects_;  // null without --objects; a watch script changes it
  std::string list_version_ = "12345";
  mock_kube_api::WatchScript watches_;
  httplib::SSLServer server_;
  std::mutex log_mutex_;
  std::ofstream log_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

std::optional<Json> LoadPods(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "mock-kube-api: cannot read " << path << "\n";
    return std::nullopt;
  }
  try {
    Json pods = Json::parse(in);
    if (!pods.is_object()) {
      std::cerr << "mock-kube-api: " << path << " is not a JSON object\n";
      return std::nullopt;
    }
    return pods;
  } catch (const Json::exception& e) {
    std::cerr << "mock-kube-api: " << path << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = ParseArgs(argc, argv);
  if (!options) {
    Usage();
    return 2;
  }
  std::optional<Json> pods = options->pods.empty() ? std::optional<Json>(Json::object()) : LoadPods(options->pods);
  if (!pods) return 2;
  std::optional<Json> objects = options->objects.empty() ? std::optional<Json>(Json()) : LoadPods(options->objects);
  if (!objects) return 2;
  std::optional<Json> watch_script =
      options->watch_script.empty() ? std::optional<Json>(Json()) : LoadPods(options->watch_script);
  if (!watch_script) return 2;

  // Block the stop signals before any thread starts, so that only the waiter
  // below receives them; ignore SIGPIPE from clients that hang up.
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  MockKubeApi mock(std::move(*options), std::move(*pods), std::move(*objects), std::move(*watch_script));
  std::string error;
  if (!mock.Start(&error)) {
    std::cerr << "mock-kube-api: " << error << "\n";
    return 1;
  }

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    mock.Stop();
  });
  std::cout << "listening" << std::endl;
  const bool served = mock.Serve();
  // Serve also returns on its own when the socket fails; wake the waiter then.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (!served) {
    std::cerr << "mock-kube-api: the server stopped with an error\n";
    return 1;
  }
  return 0;
}
