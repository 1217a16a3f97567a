// The core's own view of an AdmissionReview request.
//
// Contract: plain data, no parser types. Every string_view points into the
// buffer of the ReviewDecoder that produced it, so a request is valid only as
// long as that decoder is alive and has not decoded another body. Only the
// fields the rules read are kept; the rest of the object is never materialised.
#pragma once

#include <optional>
#include <string_view>

#include "ray_webhook/core/model/pod_view.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

enum class ReviewVersion { kV1, kV1beta1 };

// "admission.k8s.io/v1" or "admission.k8s.io/v1beta1": the answer must use the
// request's own version (kube-apiserver request/admissionreview.go).
std::string_view ApiVersionString(ReviewVersion version);

struct AdmissionRequest {
  ReviewVersion version = ReviewVersion::kV1;
  std::string_view uid;
  GroupVersionKind kind;
  std::string_view operation;  // CREATE, UPDATE, DELETE or CONNECT
  std::string_view namespace_name;
  std::string_view name;
  // Decoded only when kind is core/v1 Pod and request.object is an object.
  std::optional<Pod> pod;
  // Decoded only when kind is a ray.io RayCluster, RayJob or RayService
  // (RayObjectKindOf) and request.kind comes before request.object, as
  // kube-apiserver sends it; old_ray_object also needs request.oldObject to
  // be an object (UPDATE).
  std::optional<RayObject> ray_object;
  std::optional<RayObject> old_ray_object;

  bool IsPodCreate() const {
    return operation == "CREATE" && kind.group.empty() && kind.version == "v1" && kind.kind == "Pod" && pod.has_value();
  }

  // CREATE or UPDATE of a RayCluster, RayJob or RayService.
  bool IsRayObjectWrite() const { return (operation == "CREATE" || operation == "UPDATE") && ray_object.has_value(); }

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
