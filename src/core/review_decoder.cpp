#include "ray_webhook/core/review_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <string>
#include <utility>

namespace ray_webhook {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// Walks the body once, front to back, with simdjson's On Demand API: no tree
// is built, strings are unescaped only when a rule reads them, and whatever
// the rules do not read is skipped by the parser's iterative scan.
// Records the first failure: invalid JSON (a simdjson error) or a field of
// the wrong type, with its JSON path.
class Reader {
 public:
  bool failed() const { return json_error_ != SUCCESS || !error_.empty(); }
  error_code json_error() const { return json_error_; }
  const std::string& error() const { return error_; }

  void Fail(std::string_view path, std::string_view what) {
    if (!failed()) error_ = std::string(path) + ": " + std::string(what);
  }
  // Makes a relative error path absolute once the failure is known, so paths
  // are spelled out only when they are reported.
  void Prefix(std::string_view prefix) {
    if (!error_.empty()) error_.insert(0, prefix);
  }
  // For a decoder that walked a value on behalf of this one.
  void Adopt(const Reader& other) {
    if (failed()) return;
    json_error_ = other.json_error_;
    error_ = other.error_;
  }

  // False, with the error recorded, unless e is SUCCESS.
  bool Ok(error_code e) {
    if (e != SUCCESS && !failed()) json_error_ = e;
    return e == SUCCESS;
  }

  // An array element and its JSON type; false, with the error recorded, when
  // either cannot be read.
  template <typename Item>
  bool Element(Item&& item, od::value* e, od::json_type* t) {
    return Ok(std::forward<Item>(item).get(*e)) && Ok(e->type().get(*t));
  }

  // Calls visit(key, value) for each field in document order until it fails.
  // A repeated key is visited again, so its last value wins, as in Go's encoding/json.
  template <typename Visit>
  void Fields(od::object obj, Visit&& visit) {
    for (auto item : obj) {
      od::field field;
      std::string_view key;
      if (!Ok(std::move(item).get(field)) || !Ok(field.unescaped_key().get(key))) return;
      visit(key, field.value());
      if (failed()) return;
    }
  }

  // Null leaves *out untouched, as an absent field does; other non-strings fail.
  void String(od::value v, std::string_view path, std::string_view* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::string) return Fail(path, "expected a string");
    Ok(v.get_string().get(*out));
  }

  // Null leaves *out untouched, as an absent field does; other non-booleans fail.
  void Bool(od::value v, std::string_view path, bool* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::boolean) return Fail(path, "expected a boolean");
    Ok(v.get_bool().get(*out));
  }

  // False for null, as for an absent field; other non-objects fail.
  bool Object(od::value v, std::string_view path, od::object* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return false;
    if (t != od::json_type::object) {
      Fail(path, "expected an object");
      return false;
    }
    return Ok(v.get_object().get(*out));
  }

  bool Array(od::value v, std::string_view path, od::array* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return false;
    if (t != od::json_type::array) {
      Fail(path, "expected an array");
      return false;
    }
    return Ok(v.get_array().get(*out));
  }

  // Calls visit(object) for each element of a; elements that are not
  // objects fail with what_else at path.
  template <typename Visit>
  void Objects(od::array a, std::string_view path, std::string_view what_else, Visit&& visit) {
    for (auto item : a) {
      od::value e;
      od::json_type t;
      if (!Element(std::move(item), &e, &t)) return;
      od::object o;
      if (t != od::json_type::object) return Fail(path, what_else);
      if (!Ok(e.get_object().get(o))) return;
      visit(o);
      if (failed()) return;
    }
  }

  void Strings(od::value v, std::string_view path, std::vector<std::string_view>* out) {
    out->clear();
    od::array a;
    if (!Array(v, path, &a)) return;
    for (auto item : a) {
      od::value e;
      od::json_type t;
      if (!Element(std::move(item), &e, &t)) return;
      if (t != od::json_type::string) return Fail(path, "expected an array of strings");
      std::string_view s;
      if (!Ok(e.get_string().get(s))) return;
      out->push_back(s);
    }
  }

  void Map(od::value v, std::string_view path, StringMap* out) {
    out->clear();
    od::object m;
    if (!Object(v, path, &m)) return;
    Fields(m, [&](std::string_view key, od::value value) {
      od::json_type t;
      if (!Ok(value.type().get(t))) return;
      if (t != od::json_type::string) return Fail(path, "expected string values");
      std::string_view s;
      if (Ok(value.get_string().get(s))) out->emplace_back(key, s);
    });
  }

  // A list of volume mounts, and the paths its errors are reported at.
  struct MountPaths {
    std::string_view list, name, mount_path;
  };
  void VolumeMounts(od::value v, const MountPaths& path, std::vector<VolumeMount>* out) {
    out->clear();
    od::array mounts;
    if (!Array(v, path.list, &mounts)) return;
    Objects(mounts, path.list, "expected an array of objects", [&](od::object m) {
      VolumeMount& vm = out->emplace_back();
      Fields(m, [&](std::string_view k, od::value value) {
        if (k == "name") {
          String(value, path.name, &vm.name);
        } else if (k == "mountPath") {
          String(value, path.mount_path, &vm.mount_path);
        }
      });
    });
  }

  // Fills *out in place: elements left from the previous review keep their
  // lists' storage, so a review like the last one allocates nothing here.
  // path is relative to the object decoded, e.g. "spec.containers".
  void Containers(od::value v, std::string_view path, std::vector<Container>* out) {
    od::array list;
    if (!Array(v, path, &list)) {
      out->clear();
      return;
    }
    std::size_t i = 0;
    // Paths are spelled out only on failure, so the common case allocates nothing for them.
    auto here = [&] { return std::string(path) + "[" + std::to_string(i) + "]"; };
    for (auto item : list) {
      od::value e;
      od::json_type t;
      if (!Element(std::move(item), &e, &t)) return;
      od::object c;
      if (t != od::json_type::object) return Fail(here(), "expected an object");
      if (!Ok(e.get_object().get(c))) return;
      if (i == out->size()) out->emplace_back();
      DecodeContainer(c, (*out)[i]);
      if (failed()) {
        if (!error_.empty()) error_ = here() + error_;
        return;
      }
      ++i;
    }
    out->resize(i);
  }

 private:
  // Errors are reported relative to the container (".env: ...") and
  // prefixed with the container's path by the caller.
  void DecodeContainer(od::object c, Container& out) {
    out.name = {};
    out.image = {};
    out.has_env_list = false;
    out.env.clear();
    out.command.clear();
    out.args.clear();
    out.volume_mounts.clear();
    Fields(c, [&](std::string_view key, od::value v) {
      if (key == "name") {
        String(v, ".name", &out.name);
      } else if (key == "image") {
        String(v, ".image", &out.image);
      } else if (key == "command") {
        Strings(v, ".command", &out.command);
      } else if (key == "args") {
        Strings(v, ".args", &out.args);
      } else if (key == "env") {
        out.env.clear();
        od::array env;
        out.has_env_list = Array(v, ".env", &env);
        if (!out.has_env_list) return;
        Objects(env, ".env", "expected an array of objects", [&](od::object var) {
          EnvVar& e = out.env.emplace_back();
          Fields(var, [&](std::string_view k, od::value value) {
            if (k == "name") {
              String(value, ".env[].name", &e.name);
            } else if (k == "value") {
              std::string_view s;
              bool present = false;
              StringOrNull(value, ".env[].value", &s, &present);
              e.value = present ? std::optional<std::string_view>(s) : std::nullopt;
            }
          });
        });
      } else if (key == "volumeMounts") {
        VolumeMounts(v, {".volumeMounts", ".volumeMounts[].name", ".volumeMounts[].mountPath"}, &out.volume_mounts);
      }
    });
  }

  // As String, and says whether a string was there.
  void StringOrNull(od::value v, std::string_view path, std::string_view* out, bool* present) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::string) return Fail(path, "expected a string");
    *present = Ok(v.get_string().get(*out));
  }

  error_code json_error_ = SUCCESS;
  std::string error_;
};

// A repeated metadata key adds to what the earlier one set, as Go's
// encoding/json does for a struct; the caller clears meta once.
void DecodeMeta(od::value v, Reader& r, ObjectMeta& meta) {
  od::object o;
  if (!r.Object(v, "metadata", &o)) return;
  r.Fields(o, [&](std::string_view k, od::value m) {
    if (k == "name") {
      r.String(m, "metadata.name", &meta.name);
    } else if (k == "generateName") {
      r.String(m, "metadata.generateName", &meta.generate_name);
    } else if (k == "namespace") {
      r.String(m, "metadata.namespace", &meta.namespace_name);
    } else if (k == "labels") {
      r.Map(m, "metadata.labels", &meta.labels);
    } else if (k == "annotations") {
      r.Map(m, "metadata.annotations", &meta.annotations);
    }
  });
}

// Fills pod in place, reusing the storage of the lists it already has. Also
// reads a Pod template (metadata and spec are all it has of a Pod). Error
// paths are relative to the object ("spec.containers[0].name: ..."); the
// caller prefixes where the object is.
void DecodePod(od::object obj, Reader& r, Pod& pod) {
  ObjectMeta& meta = pod.metadata;
  meta.name = meta.generate_name = meta.namespace_name = {};
  meta.labels.clear();
  meta.annotations.clear();
  bool containers = false, init_containers = false, ephemeral_containers = false;
  r.Fields(obj, [&](std::string_view key, od::value v) {
    od::object o;
    if (key == "metadata") {
      DecodeMeta(v, r, meta);
    } else if (key == "spec") {
      if (!r.Object(v, "spec", &o)) return;
      r.Fields(o, [&](std::string_view k, od::value list) {
        if (k == "containers") {
          containers = true;
          r.Containers(list, "spec.containers", &pod.containers);
        } else if (k == "initContainers") {
          init_containers = true;
          r.Containers(list, "spec.initContainers", &pod.init_containers);
        } else if (k == "ephemeralContainers") {
          ephemeral_containers = true;
          r.Containers(list, "spec.ephemeralContainers", &pod.ephemeral_containers);
        }
      });
    }
  });
  if (!containers) pod.containers.clear();
  if (!init_containers) pod.init_containers.clear();
  if (!ephemeral_containers) pod.ephemeral_containers.clear();
}

// The ray.io objects below are decoded into fresh values (they are rare next to
// Pods), each bounded by the body: a list holds one entry per element read.

// A HeadGroupSpec or WorkerGroupSpec; error paths relative to the group.
void DecodeGroup(od::object obj, Reader& r, RayGroupSpec& group, bool worker) {
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (worker && key == "groupName") {
      r.String(v, "groupName", &group.group_name);
    } else if (key == "rayStartParams") {
      r.Map(v, "rayStartParams", &group.ray_start_params);
    } else if (key == "template") {
      od::object t;
      if (!r.Object(v, "template", &t)) return;
      Reader inner;
      DecodePod(t, inner, group.template_pod);
      inner.Prefix("template.");
      r.Adopt(inner);
    }
  });
}

// A RayClusterSpec (ray-operator/apis/ray/v1/raycluster_types.go); error
// paths relative to it.
void DecodeClusterSpec(od::object obj, Reader& r, RayClusterSpecView& spec) {
  r.Fields(obj, [&](std::string_view key, od::value v) {
    od::object o;
    if (key == "enableInTreeAutoscaling") {
      r.Bool(v, "enableInTreeAutoscaling", &spec.enable_in_tree_autoscaling);
    } else if (key == "autoscalerOptions") {
      spec.autoscaler_volume_mounts.clear();
      if (!r.Object(v, "autoscalerOptions", &o)) return;
      r.Fields(o, [&](std::string_view k, od::value f) {
        if (k != "volumeMounts") return;
        r.VolumeMounts(f,
                       {"autoscalerOptions.volumeMounts", "autoscalerOptions.volumeMounts[].name",
                        "autoscalerOptions.volumeMounts[].mountPath"},
                       &spec.autoscaler_volume_mounts);
      });
    } else if (key == "authOptions") {
      spec.auth_mode = {};
      spec.enable_k8s_token_auth = false;
      if (!r.Object(v, "authOptions", &o)) return;
      r.Fields(o, [&](std::string_view k, od::value f) {
        if (k == "mode") {
          r.String(f, "authOptions.mode", &spec.auth_mode);
        } else if (k == "enableK8sTokenAuth") {
          r.Bool(f, "authOptions.enableK8sTokenAuth", &spec.enable_k8s_token_auth);
        }
      });
    } else if (key == "tlsOptions") {
      spec.tls_enabled = false;
      if (!r.Object(v, "tlsOptions", &o)) return;
      r.Fields(o, [&](std::string_view k, od::value f) {
        if (k == "enabled") r.Bool(f, "tlsOptions.enabled", &spec.tls_enabled);
      });
    } else if (key == "headGroupSpec") {
      spec.head_group = {};
      spec.has_head_group = r.Object(v, "headGroupSpec", &o);
      if (!spec.has_head_group) return;
      Reader inner;
      DecodeGroup(o, inner, spec.head_group, false);
      inner.Prefix("headGroupSpec.");
      r.Adopt(inner);
    } else if (key == "workerGroupSpecs") {
      spec.worker_groups.clear();
      od::array groups;
      if (!r.Array(v, "workerGroupSpecs", &groups)) return;
      r.Objects(groups, "workerGroupSpecs", "expected an array of objects", [&](od::object g) {
        Reader inner;
        DecodeGroup(g, inner, spec.worker_groups.emplace_back(), true);
        inner.Prefix("workerGroupSpecs[" + std::to_string(spec.worker_groups.size() - 1) + "].");
        r.Adopt(inner);
      });
    }
  });
}

// A RayCluster, RayJob or RayService; error paths relative to the object.
void DecodeRayObject(od::object obj, Reader& r, RayObjectKind kind, RayObject& out) {
  out = RayObject{};
  out.kind = kind;
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (key == "metadata") {
      DecodeMeta(v, r, out.metadata);
      return;
    }
    if (key != "spec") return;
    od::object spec;
    out.cluster.reset();
    out.uses_cluster_selector = false;
    if (!r.Object(v, "spec", &spec)) return;
    if (kind == RayObjectKind::kRayCluster) {
      Reader inner;
      DecodeClusterSpec(spec, inner, out.cluster.emplace());
      inner.Prefix("spec.");
      r.Adopt(inner);
      return;
    }
    const std::string_view field = kind == RayObjectKind::kRayJob ? "rayClusterSpec" : "rayClusterConfig";
    r.Fields(spec, [&](std::string_view k, od::value f) {
      od::object o;
      if (k == field) {
        out.cluster.reset();
        if (!r.Object(f, kind == RayObjectKind::kRayJob ? "spec.rayClusterSpec" : "spec.rayClusterConfig", &o)) return;
        Reader inner;
        DecodeClusterSpec(o, inner, out.cluster.emplace());
        inner.Prefix(kind == RayObjectKind::kRayJob ? "spec.rayClusterSpec." : "spec.rayClusterConfig.");
        r.Adopt(inner);
      } else if (kind == RayObjectKind::kRayJob && k == "clusterSelector") {
        StringMap selector;
        r.Map(f, "spec.clusterSelector", &selector);
        out.uses_cluster_selector = !selector.empty();
      }
    });
  });
}

bool IsCorePod(const GroupVersionKind& kind) {
  return kind.group.empty() && kind.version == "v1" && kind.kind == "Pod";
}

// Reads a scalar root, to tell valid JSON that is not an object from a bare word.
error_code ReadScalar(od::document& doc, od::json_type type) {
  switch (type) {
    case od::json_type::string: return doc.get_string().error();
    case od::json_type::number: return doc.get_number().error();
    case od::json_type::boolean: return doc.get_bool().error();
    case od::json_type::null: {
      bool null = false;
      const error_code e = doc.is_null().get(null);
      return e != SUCCESS ? e : null ? SUCCESS : simdjson::N_ATOM_ERROR;
    }
    default: return SUCCESS;
  }
}

std::string InvalidJson(error_code e) {
  return std::string("request body is not valid JSON: ") + simdjson::error_message(e);
}

}  // namespace

struct ReviewDecoder::Impl {
  od::parser parser;
  // Bodies without readable padding are copied here; reused, so a review
  // allocates nothing for the copy once the buffer has grown.
  std::string scratch;
  // The last request decoded, and a Pod kept between reviews: each review
  // refills their lists in place, in memory the previous review left warm,
  // instead of allocating a dozen new ones.
  AdmissionRequest request;
  Pod spare_pod;

  // Sets the request's Pod aside, moving its lists' storage (freeing nothing),
  // for the next Pod decoded to refill.
  void ParkPod() {
    if (!request.pod) return;
    spare_pod = std::move(*request.pod);
    request.pod.reset();
  }
};

ReviewDecoder::ReviewDecoder() : impl_(std::make_unique<Impl>()) {
  // Room for any ordinary Pod up front (pages are touched only as used), so
  // bodies of slightly different sizes do not each grow the buffers again.
  // Larger bodies grow them on demand; if this fails, iterate() retries per request.
  if (impl_->parser.allocate(kDefaultCapacity) != simdjson::SUCCESS) return;
}

std::size_t ReviewDecoder::capacity() const { return std::max(impl_->parser.capacity(), impl_->scratch.capacity()); }

void ReviewDecoder::ShrinkToDefault() {
  if (capacity() <= kDefaultCapacity) return;
  // A new decoder's state also drops the lists a large Pod grew (thousands of env entries).
  ReviewDecoder fresh;
  std::swap(impl_, fresh.impl_);
}

ReviewDecoder::~ReviewDecoder() = default;

Result<const AdmissionRequest*> ReviewDecoder::Decode(std::string_view body, std::size_t readable_padding) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::Error("request body is empty; expected an AdmissionReview");
  }
  const char* data = body.data();
  std::size_t capacity = body.size() + readable_padding;
  if (readable_padding < simdjson::SIMDJSON_PADDING) {
    std::string& scratch = impl_->scratch;
    if (scratch.capacity() < body.size() + simdjson::SIMDJSON_PADDING)
      scratch.reserve(body.size() + simdjson::SIMDJSON_PADDING);
    scratch.assign(body.data(), body.size());
    data = scratch.data();
    capacity = scratch.capacity();
  }
  od::document doc;
  od::json_type root_type;
  error_code e = impl_->parser.iterate(simdjson::padded_string_view(data, body.size(), capacity)).get(doc);
  if (e == SUCCESS) e = doc.type().get(root_type);
  if (e != SUCCESS) {
    return Status::Error(InvalidJson(e));
  }
  od::object review;
  if (root_type != od::json_type::object) {
    e = ReadScalar(doc, root_type);
    return Status::Error(e == SUCCESS ? "request body is not a JSON object; expected an AdmissionReview"
                                      : InvalidJson(e));
  }
  if ((e = doc.get_object().get(review)) != SUCCESS) {
    return Status::Error(InvalidJson(e));
  }

  AdmissionRequest& req = impl_->request;
  impl_->ParkPod();
  req.ray_object.reset();
  req.old_ray_object.reset();
  req.version = ReviewVersion::kV1;
  req.uid = req.operation = req.namespace_name = req.name = {};
  req.kind = {};

  // One pass in document order, so what depends on other fields is settled
  // after it: whether the object is a Pod depends on request.kind, which a
  // hand-written review may put after request.object.
  std::string_view api_version, kind;
  bool has_request = false;
  Reader header;  // apiVersion and kind
  Reader r;       // the request
  Reader pod;     // the Pod, which counts only when request.kind says Pod
  Reader ray;     // a ray.io object, read only once request.kind names one
  bool object_before_kind = false;
  r.Fields(review, [&](std::string_view key, od::value v) {
    if (key == "apiVersion") {
      header.String(v, "apiVersion", &api_version);
    } else if (key == "kind") {
      header.String(v, "kind", &kind);
    } else if (key == "request") {
      od::object request;
      has_request = r.Object(v, "request", &request);
      if (!has_request) return;
      r.Fields(request, [&](std::string_view k, od::value f) {
        if (k == "uid") {
          r.String(f, "request.uid", &req.uid);
        } else if (k == "kind") {
          od::object gvk;
          if (!r.Object(f, "request.kind", &gvk)) return;
          r.Fields(gvk, [&](std::string_view part, od::value g) {
            if (part == "group") {
              r.String(g, "request.kind.group", &req.kind.group);
            } else if (part == "version") {
              r.String(g, "request.kind.version", &req.kind.version);
            } else if (part == "kind") {
              r.String(g, "request.kind.kind", &req.kind.kind);
            }
          });
        } else if (k == "operation") {
          r.String(f, "request.operation", &req.operation);
        } else if (k == "namespace") {
          r.String(f, "request.namespace", &req.namespace_name);
        } else if (k == "name") {
          r.String(f, "request.name", &req.name);
        } else if (k == "object" || k == "oldObject") {
          const bool old_object = k == "oldObject";
          if (const auto ray_kind = RayObjectKindOf(req.kind)) {
            std::optional<RayObject>& out = old_object ? req.old_ray_object : req.ray_object;
            out.reset();
            Reader reader;
            od::object obj;
            if (reader.Object(f, old_object ? "request.oldObject" : "request.object", &obj)) {
              DecodeRayObject(obj, reader, *ray_kind, out.emplace());
              reader.Prefix(old_object ? "request.oldObject." : "request.object.");
            }
            if (reader.json_error() != SUCCESS) {
              r.Adopt(reader);  // invalid JSON ends the walk
            } else if (old_object) {
              // The stored object is only compared with; one that does not read is as good as none.
              if (reader.failed()) out.reset();
            } else {
              ray = reader;
              object_before_kind = false;
            }
            return;
          }
          // The old Pod is never read; the object is skipped unread once the
          // kind is known not to be a Pod.
          if (old_object || (!req.kind.kind.empty() && !IsCorePod(req.kind))) return;
          od::object obj;
          pod = Reader();
          impl_->ParkPod();
          if (!pod.Object(f, "request.object", &obj)) return;
          object_before_kind = req.kind.kind.empty();
          req.pod.emplace(std::move(impl_->spare_pod));
          DecodePod(obj, pod, *req.pod);
          pod.Prefix("request.object.");
          // Invalid JSON ends the walk; a type error in a Pod may not count.
          if (pod.json_error() != SUCCESS) r.Adopt(pod);
        }
      });
    }
  });
  if (r.json_error() == SUCCESS && header.json_error() != SUCCESS) r.Adopt(header);
  // Content after the review is invalid JSON (Go's decoder refuses it too).
  // Once the walk is done, the document's raw JSON ends where the next token
  // starts, which is the end of the body when there is none.
  if (!r.failed()) {
    std::string_view whole;
    if (r.Ok(doc.raw_json().get(whole)) && whole.data() + whole.size() != data + body.size()) {
      r.Ok(simdjson::TRAILING_CONTENT);
    }
  }
  if (r.json_error() != SUCCESS) {
    return Status::Error(InvalidJson(r.json_error()));
  }
  if (header.failed()) {
    return Status::Error("apiVersion and kind must be strings");
  }
  if (api_version == "admission.k8s.io/v1") {
    req.version = ReviewVersion::kV1;
  } else if (api_version == "admission.k8s.io/v1beta1") {
    req.version = ReviewVersion::kV1beta1;
  } else {
    return Status::Error("unsupported apiVersion \"" + std::string(api_version.substr(0, 64)) +
                         "\"; expected admission.k8s.io/v1 or admission.k8s.io/v1beta1");
  }
  if (kind != "AdmissionReview") {
    return Status::Error("unsupported kind \"" + std::string(kind.substr(0, 64)) + "\"; expected AdmissionReview");
  }
  if (!has_request) {
    return Status::Error("AdmissionReview has no request object");
  }
  if (!r.failed() && req.uid.empty()) r.Fail("request.uid", "missing; the answer must echo it");
  if (IsCorePod(req.kind)) {
    r.Adopt(pod);
  } else {
    impl_->ParkPod();
  }
  if (RayObjectKindOf(req.kind)) {
    // One pass, front to back: an object read before its kind was known was
    // read as a Pod, and cannot be read again. kube-apiserver always sends
    // the kind first.
    if (object_before_kind && !r.failed()) {
      r.Fail("request.object", "a ray.io object must come after request.kind in the review");
    }
    r.Adopt(ray);
  }
  if (r.failed()) {
    return Status::Error(r.error());
  }
  return &req;
}

}  // namespace ray_webhook
