#include "ray_webhook/review_decoder.h"

#include <simdjson.h>

#include <string>

namespace ray_webhook {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Collects the first type error with the JSON path where it happened.
class Reader {
 public:
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void Fail(std::string_view path, std::string_view what) {
    if (error_.empty()) error_ = std::string(path) + ": " + std::string(what);
  }

  // Absent and null fields leave *out untouched; other non-strings fail.
  void String(object obj, std::string_view key, std::string_view path, std::string_view* out) {
    element e;
    if (!Field(obj, key, &e)) return;
    if (e.get_string().get(*out) != simdjson::SUCCESS) Fail(std::string(path) + "." + std::string(key), "expected a string");
  }

  // Returns false when the field is absent or null.
  bool Field(object obj, std::string_view key, element* out) {
    if (obj.at_key(key).get(*out) != simdjson::SUCCESS) return false;
    return !out->is_null();
  }

  bool Object(object obj, std::string_view key, std::string_view path, object* out) {
    element e;
    if (!Field(obj, key, &e)) return false;
    if (e.get_object().get(*out) != simdjson::SUCCESS) {
      Fail(std::string(path) + "." + std::string(key), "expected an object");
      return false;
    }
    return true;
  }

  bool Array(object obj, std::string_view key, std::string_view path, array* out) {
    element e;
    if (!Field(obj, key, &e)) return false;
    if (e.get_array().get(*out) != simdjson::SUCCESS) {
      Fail(std::string(path) + "." + std::string(key), "expected an array");
      return false;
    }
    return true;
  }

  void Strings(object obj, std::string_view key, std::string_view path,
               std::vector<std::string_view>* out) {
    array a;
    if (!Array(obj, key, path, &a)) return;
    out->reserve(a.size());
    for (element e : a) {
      std::string_view s;
      if (e.get_string().get(s) != simdjson::SUCCESS) {
        Fail(std::string(path) + "." + std::string(key), "expected an array of strings");
        return;
      }
      out->push_back(s);
    }
  }

  void Map(object obj, std::string_view key, std::string_view path, StringMap* out) {
    object m;
    if (!Object(obj, key, path, &m)) return;
    out->reserve(m.size());
    for (auto field : m) {
      std::string_view v;
      if (field.value.get_string().get(v) != simdjson::SUCCESS) {
        Fail(std::string(path) + "." + std::string(key), "expected string values");
        return;
      }
      out->emplace_back(field.key, v);
    }
  }

  // Fills *out in place: elements left from the previous review keep their
  // lists' storage, so a review like the last one allocates nothing here.
  void Containers(object spec, std::string_view key, std::vector<Container>* out) {
    array list;
    if (!Array(spec, key, "request.object.spec", &list)) {
      out->clear();
      return;
    }
    std::size_t i = 0;
    for (element e : list) {
      // Paths are spelled out only on failure, so the common case allocates nothing for them.
      auto path = [&] { return "request.object.spec." + std::string(key) + "[" + std::to_string(i) + "]"; };
      object c;
      if (e.get_object().get(c) != simdjson::SUCCESS) return Fail(path(), "expected an object");
      if (i == out->size()) out->emplace_back();
      DecodeContainer(c, (*out)[i]);
      if (failed()) {
        std::string inner = std::move(error_);
        error_ = path() + inner;
        return;
      }
      ++i;
    }
    out->resize(i);
  }

 private:
  // Errors are reported relative to the container ("" + ".env: ...") and
  // prefixed with the container's path by the caller.
  void DecodeContainer(object c, Container& out) {
    out.name = {};
    out.image = {};
    out.has_env_list = false;
    out.env.clear();
    out.command.clear();
    out.args.clear();
    out.volume_mounts.clear();
    String(c, "name", "", &out.name);
    String(c, "image", "", &out.image);
    Strings(c, "command", "", &out.command);
    Strings(c, "args", "", &out.args);
    array env;
    if (Array(c, "env", "", &env)) {
      out.has_env_list = true;
      out.env.reserve(env.size());
      for (element e : env) {
        object var;
        if (e.get_object().get(var) != simdjson::SUCCESS) {
          Fail(".env", "expected an array of objects");
          return;
        }
        EnvVar v;
        String(var, "name", ".env[]", &v.name);
        element value;
        if (Field(var, "value", &value)) {
          std::string_view s;
          if (value.get_string().get(s) != simdjson::SUCCESS) Fail(".env[].value", "expected a string");
          v.value = s;
        }
        out.env.push_back(v);
      }
    }
    array mounts;
    if (Array(c, "volumeMounts", "", &mounts)) {
      out.volume_mounts.reserve(mounts.size());
      for (element e : mounts) {
        object m;
        if (e.get_object().get(m) != simdjson::SUCCESS) {
          Fail(".volumeMounts", "expected an array of objects");
          return;
        }
        VolumeMount vm;
        String(m, "name", ".volumeMounts[]", &vm.name);
        String(m, "mountPath", ".volumeMounts[]", &vm.mount_path);
        out.volume_mounts.push_back(vm);
      }
    }
  }

  std::string error_;
};

// Fills pod in place, reusing the storage of the lists it already has.
void DecodePod(object obj, Reader& r, Pod& pod) {
  ObjectMeta& meta = pod.metadata;
  meta.name = meta.generate_name = meta.namespace_name = {};
  meta.labels.clear();
  meta.annotations.clear();
  object m;
  if (r.Object(obj, "metadata", "request.object", &m)) {
    constexpr std::string_view path = "request.object.metadata";
    r.String(m, "name", path, &meta.name);
    r.String(m, "generateName", path, &meta.generate_name);
    r.String(m, "namespace", path, &meta.namespace_name);
    r.Map(m, "labels", path, &meta.labels);
    r.Map(m, "annotations", path, &meta.annotations);
  }
  object spec;
  if (r.Object(obj, "spec", "request.object", &spec)) {
    r.Containers(spec, "containers", &pod.containers);
    r.Containers(spec, "initContainers", &pod.init_containers);
    r.Containers(spec, "ephemeralContainers", &pod.ephemeral_containers);
  } else {
    pod.containers.clear();
    pod.init_containers.clear();
    pod.ephemeral_containers.clear();
  }
}

}  // namespace

struct ReviewDecoder::Impl {
  simdjson::dom::parser parser;
  // Bodies without readable padding are copied here; reused, so a review
  // allocates nothing for the copy once the buffer has grown.
  std::string scratch;
  // The last request decoded, and a Pod kept between reviews: each review
  // refills their lists in place, in memory the previous review left warm,
  // instead of allocating a dozen new ones.
  AdmissionRequest request;
  Pod spare_pod;
};

ReviewDecoder::ReviewDecoder(std::size_t max_depth) : impl_(std::make_unique<Impl>()) {
  // Capacity grows on demand; only the depth bound is fixed here.
  // If this small first allocation fails, parse() reports it per request.
  if (impl_->parser.allocate(64 * 1024, max_depth) != simdjson::SUCCESS) return;
}

ReviewDecoder::~ReviewDecoder() = default;

DecodeResult ReviewDecoder::Decode(std::string_view body, std::size_t readable_padding) {
  DecodeResult result;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    result.error = "request body is empty; expected an AdmissionReview";
    return result;
  }
  element root;
  const char* data = body.data();
  if (readable_padding < simdjson::SIMDJSON_PADDING) {
    std::string& scratch = impl_->scratch;
    if (scratch.capacity() < body.size() + simdjson::SIMDJSON_PADDING) scratch.reserve(body.size() + simdjson::SIMDJSON_PADDING);
    scratch.assign(body.data(), body.size());
    data = scratch.data();
  }
  auto parse_error = impl_->parser.parse(data, body.size(), false).get(root);
  if (parse_error == simdjson::DEPTH_ERROR) {
    result.error = "request body is nested too deeply";
    return result;
  }
  if (parse_error != simdjson::SUCCESS) {
    result.error = std::string("request body is not valid JSON: ") + simdjson::error_message(parse_error);
    return result;
  }
  object review;
  if (root.get_object().get(review) != simdjson::SUCCESS) {
    result.error = "request body is not a JSON object; expected an AdmissionReview";
    return result;
  }

  AdmissionRequest& req = impl_->request;
  if (req.pod) {
    impl_->spare_pod = std::move(*req.pod);  // moves the lists' storage, frees nothing
    req.pod.reset();
  }
  req.version = ReviewVersion::kV1;
  req.uid = req.operation = req.namespace_name = req.name = {};
  req.kind = {};
  std::string_view api_version, kind;
  Reader r;
  r.String(review, "apiVersion", "", &api_version);
  r.String(review, "kind", "", &kind);
  if (r.failed()) {
    result.error = "apiVersion and kind must be strings";
    return result;
  }
  if (api_version == "admission.k8s.io/v1") {
    req.version = ReviewVersion::kV1;
  } else if (api_version == "admission.k8s.io/v1beta1") {
    req.version = ReviewVersion::kV1beta1;
  } else {
    result.error = "unsupported apiVersion \"" + std::string(api_version.substr(0, 64)) +
                   "\"; expected admission.k8s.io/v1 or admission.k8s.io/v1beta1";
    return result;
  }
  if (kind != "AdmissionReview") {
    result.error = "unsupported kind \"" + std::string(kind.substr(0, 64)) + "\"; expected AdmissionReview";
    return result;
  }

  object request;
  if (!r.Object(review, "request", "", &request) || r.failed()) {
    result.error = "AdmissionReview has no request object";
    return result;
  }
  r.String(request, "uid", "request", &req.uid);
  if (!r.failed() && req.uid.empty()) r.Fail("request.uid", "missing; the answer must echo it");
  object gvk;
  if (r.Object(request, "kind", "request", &gvk)) {
    r.String(gvk, "group", "request.kind", &req.kind.group);
    r.String(gvk, "version", "request.kind", &req.kind.version);
    r.String(gvk, "kind", "request.kind", &req.kind.kind);
  }
  r.String(request, "operation", "request", &req.operation);
  r.String(request, "namespace", "request", &req.namespace_name);
  r.String(request, "name", "request", &req.name);

  if (!r.failed() && req.kind.group.empty() && req.kind.version == "v1" && req.kind.kind == "Pod") {
    object obj;
    if (r.Object(request, "object", "request", &obj)) {
      req.pod.emplace(std::move(impl_->spare_pod));
      DecodePod(obj, r, *req.pod);
    }
  }
  if (r.failed()) {
    result.error = r.error();
    return result;
  }
  result.request = &req;
  return result;
}

}  // namespace ray_webhook
