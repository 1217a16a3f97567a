// OperatorDeployment: what a KubeRay operator's Deployment says about the
// release it runs.
//
// Contract: ReadOperatorDeployment reads one Deployment's JSON text, as the
// API lists or watches it, and never throws. Text that is not an object, or
// a field of the wrong type where it reads one, is an error naming it. The
// operator's container is the one named "kuberay-operator" (the name the
// Helm chart and the kustomize manifests give it, KubeRay v1.6.2
// helm-chart/kuberay-operator/templates/deployment.yaml and
// ray-operator/config/manager/manager.yaml), else the first whose image
// repository ends in "/operator" or "kuberay-operator"; a Deployment with
// neither is not an operator (has_operator_container false). Of it only the
// image, the app.kubernetes.io/version label, the replicas and the
// container's args are kept: a few hundred bytes whatever the Deployment holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

struct OperatorDeployment {
  std::string namespace_name;
  std::string name;
  bool has_operator_container = false;
  std::string image;      // as written: "quay.io/kuberay/operator:v1.6.2"
  std::string image_tag;  // "v1.6.2"; empty when the image names no tag
  bool image_has_digest = false;
  std::string version_label;  // metadata.labels["app.kubernetes.io/version"]
  long long replicas = 1;     // spec.replicas; the API defaults it to 1
  std::vector<std::string> args;

  std::string Id() const { return namespace_name + "/" + name; }
};

Result<OperatorDeployment> ReadOperatorDeployment(std::string_view json);

// The image's tag and whether it pins a digest: "repo/op:v1.6.2@sha256:..."
// has the tag "v1.6.2"; "host:5000/repo/op" has none (the port is no tag).
void SplitImageReference(std::string_view image, std::string* tag, bool* has_digest);

}  // namespace ray_webhook
