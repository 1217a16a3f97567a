#include "ray_webhook/operator_release/operator_deployment.h"

#include <simdjson.h>

namespace ray_webhook {
namespace {

using simdjson::SUCCESS;
namespace dom = simdjson::dom;

constexpr std::string_view kOperatorContainer = "kuberay-operator";

// The repository part of an image reference: without the tag and digest.
std::string_view Repository(std::string_view image) {
  if (const std::size_t at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash))
    image = image.substr(0, colon);
  return image;
}

bool LooksLikeOperatorImage(std::string_view image) {
  const std::string_view repo = Repository(image);
  return repo.ends_with("/operator") || repo.ends_with(kOperatorContainer);
}

// A string member of an object, "" when absent or null; an error when of another type.
Status StringAt(dom::object object, std::string_view key, std::string_view path, std::string* out) {
  dom::element value;
  if (object.at_key(key).get(value) != SUCCESS || value.is_null()) return Status::Ok();
  std::string_view text;
  if (value.get_string().get(text) != SUCCESS) return Status::Error(std::string(path) + ": expected a string");
  out->assign(text);
  return Status::Ok();
}

// An object member, or an empty one when absent or null; an error when of another type.
Status ObjectAt(dom::object object, std::string_view key, std::string_view path, dom::object* out, bool* present) {
  *present = false;
  dom::element value;
  if (object.at_key(key).get(value) != SUCCESS || value.is_null()) return Status::Ok();
  if (value.get_object().get(*out) != SUCCESS) return Status::Error(std::string(path) + ": expected an object");
  *present = true;
  return Status::Ok();
}

Status ReadContainer(dom::object container, std::size_t index, OperatorDeployment* out) {
  const std::string path = "spec.template.spec.containers[" + std::to_string(index) + "]";
  std::string name, image;
  if (Status s = StringAt(container, "name", path + ".name", &name); !s.ok()) return s;
  if (Status s = StringAt(container, "image", path + ".image", &image); !s.ok()) return s;
  // The first container that looks like the operator, unless a later one is named for it.
  if (out->has_operator_container && name != kOperatorContainer) return Status::Ok();
  if (name != kOperatorContainer && !LooksLikeOperatorImage(image)) return Status::Ok();
  out->has_operator_container = true;
  out->image = image;
  SplitImageReference(image, &out->image_tag, &out->image_has_digest);
  out->args.clear();
  dom::element args;
  if (container.at_key("args").get(args) != SUCCESS || args.is_null()) return Status::Ok();
  dom::array list;
  if (args.get_array().get(list) != SUCCESS) return Status::Error(path + ".args: expected a list");
  for (dom::element arg : list) {
    std::string_view text;
    if (arg.get_string().get(text) != SUCCESS) return Status::Error(path + ".args: expected strings");
    out->args.emplace_back(text);
  }
  return Status::Ok();
}

}  // namespace

void SplitImageReference(std::string_view image, std::string* tag, bool* has_digest) {
  tag->clear();
  *has_digest = false;
  if (const std::size_t at = image.find('@'); at != std::string_view::npos) {
    *has_digest = true;
    image = image.substr(0, at);
  }
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    tag->assign(image.substr(colon + 1));
  }
}

Result<OperatorDeployment> ReadOperatorDeployment(std::string_view json) {
  // Deployments are small and rare; a parser per thread keeps its buffers.
  thread_local dom::parser parser;
  dom::element root;
  if (auto e = parser.parse(json.data(), json.size()).get(root); e != SUCCESS) {
    return Status::Error(std::string("not valid JSON: ") + simdjson::error_message(e));
  }
  dom::object deployment;
  if (root.get_object().get(deployment) != SUCCESS) return Status::Error("not a JSON object");
  OperatorDeployment out;
  bool present = false;
  dom::object metadata, labels, spec, pod_template, pod_spec;
  if (Status s = ObjectAt(deployment, "metadata", "metadata", &metadata, &present); !s.ok()) return s;
  if (present) {
    if (Status s = StringAt(metadata, "namespace", "metadata.namespace", &out.namespace_name); !s.ok()) return s;
    if (Status s = StringAt(metadata, "name", "metadata.name", &out.name); !s.ok()) return s;
    if (Status s = ObjectAt(metadata, "labels", "metadata.labels", &labels, &present); !s.ok()) return s;
    if (present) {
      Status s = StringAt(labels, "app.kubernetes.io/version", "metadata.labels[app.kubernetes.io/version]",
                          &out.version_label);
      if (!s.ok()) return s;
    }
  }
  if (Status s = ObjectAt(deployment, "spec", "spec", &spec, &present); !s.ok() || !present) return out;
  dom::element replicas;
  if (spec.at_key("replicas").get(replicas) == SUCCESS && !replicas.is_null()) {
    std::int64_t n = 0;
    if (replicas.get_int64().get(n) != SUCCESS) return Status::Error("spec.replicas: expected an integer");
    out.replicas = n;
  }
  if (Status s = ObjectAt(spec, "template", "spec.template", &pod_template, &present); !s.ok()) return s;
  if (!present) return out;
  if (Status s = ObjectAt(pod_template, "spec", "spec.template.spec", &pod_spec, &present); !s.ok()) return s;
  if (!present) return out;
  dom::element containers;
  if (pod_spec.at_key("containers").get(containers) != SUCCESS || containers.is_null()) return out;
  dom::array list;
  if (containers.get_array().get(list) != SUCCESS)
    return Status::Error("spec.template.spec.containers: expected a list");
  std::size_t index = 0;
  for (dom::element c : list) {
    dom::object container;
    if (c.get_object().get(container) != SUCCESS) {
      return Status::Error("spec.template.spec.containers[" + std::to_string(index) + "]: expected an object");
    }
    if (Status s = ReadContainer(container, index++, &out); !s.ok()) return s;
  }
  return out;
}

}  // namespace ray_webhook
