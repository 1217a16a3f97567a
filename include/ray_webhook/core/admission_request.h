// The core's own view of an AdmissionReview request.
//
// Contract: plain data, no parser types. Every string_view points into the
// buffer of the ReviewDecoder that produced it, so a request is valid only as
// long as that decoder is alive and has not decoded another body. Only the
// fields the rules read are kept; the rest of the Pod is never materialised.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace ray_webhook {

enum class ReviewVersion { kV1, kV1beta1 };

// "admission.k8s.io/v1" or "admission.k8s.io/v1beta1": the answer must use the
// request's own version (kube-apiserver request/admissionreview.go).
std::string_view ApiVersionString(ReviewVersion version);

struct EnvVar {
  std::string_view name;
  // Absent for valueFrom entries and for entries with neither value nor valueFrom.
  std::optional<std::string_view> value;
};

struct VolumeMount {
  std::string_view name;
  std::string_view mount_path;
};

struct Container {
  std::string_view name;
  std::string_view image;
  // False when the env field is absent or null: a patch must then create the list.
  bool has_env_list = false;
  std::vector<EnvVar> env;
  std::vector<std::string_view> command;
  std::vector<std::string_view> args;
  std::vector<VolumeMount> volume_mounts;
};

using StringMap = std::vector<std::pair<std::string_view, std::string_view>>;

// Linear search: Pods carry a handful of labels, and a vector keeps decoding
// allocation-light.
std::optional<std::string_view> Lookup(const StringMap& map, std::string_view key);

struct ObjectMeta {
  std::string_view name;
  std::string_view generate_name;
  std::string_view namespace_name;
  StringMap labels;
  StringMap annotations;
};

struct Pod {
  ObjectMeta metadata;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  std::vector<Container> ephemeral_containers;
};

struct GroupVersionKind {
  std::string_view group;
  std::string_view version;
  std::string_view kind;
};

struct AdmissionRequest {
  ReviewVersion version = ReviewVersion::kV1;
  std::string_view uid;
  GroupVersionKind kind;
  std::string_view operation;  // CREATE, UPDATE, DELETE or CONNECT
  std::string_view namespace_name;
  std::string_view name;
  // Decoded only when kind is core/v1 Pod and request.object is an object.
  std::optional<Pod> pod;

  bool IsPodCreate() const {
    return operation == "CREATE" && kind.group.empty() && kind.version == "v1" && kind.kind == "Pod" && pod.has_value();
  }

  // The Pod's namespace: request.namespace is authoritative, the object's may
  // be empty on CREATE.
  std::string_view PodNamespace() const {
    return namespace_name.empty() && pod ? pod->metadata.namespace_name : namespace_name;
  }

  // The Pod's name: the object's, else the request's (kube-apiserver has
  // generated one by the time validating webhooks run), else, before that,
  // its generateName prefix.
  std::string_view PodName() const {
    if (pod && !pod->metadata.name.empty()) return pod->metadata.name;
    if (!name.empty() || !pod) return name;
    return pod->metadata.generate_name;
  }
};

}  // namespace ray_webhook
