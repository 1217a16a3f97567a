// Builds core RayObject values directly (a RayCluster, RayJob or RayService
// and its groups), so the rules over ray.io objects are tested without JSON.
// Each group's template is a PodBuilder's Pod; the builder keeps every string.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "support/pod_builder.h"

namespace ray_webhook::testing {

class RayObjectBuilder {
 public:
  explicit RayObjectBuilder(std::string name, RayObjectKind kind = RayObjectKind::kRayCluster) {
    object_.kind = kind;
    object_.metadata.name = Keep(std::move(name));
    object_.cluster.emplace();
  }
  RayObjectBuilder(const RayObjectBuilder&) = delete;
  RayObjectBuilder& operator=(const RayObjectBuilder&) = delete;

  std::string_view Keep(std::string s) { return store_.emplace_back(std::move(s)); }

  RayObjectBuilder& Autoscaling() {
    spec().enable_in_tree_autoscaling = true;
    return *this;
  }
  RayObjectBuilder& AutoscalerMount(std::string volume, std::string path) {
    spec().autoscaler_volume_mounts.push_back({Keep(std::move(volume)), Keep(std::move(path))});
    return *this;
  }
  RayObjectBuilder& TokenAuth(bool k8s_tokens = true) {
    spec().auth_mode = "token";
    spec().enable_k8s_token_auth = k8s_tokens;
    return *this;
  }
  RayObjectBuilder& Tls() {
    spec().tls_enabled = true;
    return *this;
  }
  RayObjectBuilder& Label(std::string k, std::string v) {
    object_.metadata.labels.emplace_back(Keep(std::move(k)), Keep(std::move(v)));
    return *this;
  }
  RayObjectBuilder& Annotation(std::string k, std::string v) {
    object_.metadata.annotations.emplace_back(Keep(std::move(k)), Keep(std::move(v)));
    return *this;
  }
  RayObjectBuilder& ClusterSelector() {
    object_.uses_cluster_selector = true;
    return *this;
  }
  // Adds the head group and returns the builder of its template, whose Ray
  // container is already there; later calls on it edit that container.
  PodBuilder& Head(std::string container = "ray-head") {
    spec().has_head_group = true;
    last_is_head_ = true;
    head_ = &NewTemplate(std::move(container));
    return *head_;
  }
  PodBuilder& Worker(std::string group, std::string container = "ray-worker") {
    spec().worker_groups.emplace_back().group_name = Keep(std::move(group));
    last_is_head_ = false;
    return *workers_.emplace_back(&NewTemplate(std::move(container)));
  }
  // A rayStartParams entry of the group added last.
  RayObjectBuilder& Param(std::string k, std::string v) {
    RayGroupSpec& g = last_is_head_ ? spec().head_group : spec().worker_groups.back();
    g.ray_start_params.emplace_back(Keep(std::move(k)), Keep(std::move(v)));
    return *this;
  }

  // The object, with each group's template as its builder has it now.
  const RayObject& object() {
    if (head_) spec().head_group.template_pod = head_->pod();
    for (std::size_t i = 0; i < workers_.size(); ++i) spec().worker_groups[i].template_pod = workers_[i]->pod();
    return object_;
  }

 private:
  RayClusterSpecView& spec() { return *object_.cluster; }
  PodBuilder& NewTemplate(std::string container) {
    PodBuilder& b = pods_.emplace_back();
    b.Container(std::move(container)).Image("rayproject/ray:2.46.0");
    return b;
  }

  std::deque<std::string> store_;  // deque: views stay valid as it grows
  std::deque<PodBuilder> pods_;
  PodBuilder* head_ = nullptr;
  std::vector<PodBuilder*> workers_;
  RayObject object_;
  bool last_is_head_ = true;
};

}  // namespace ray_webhook::testing
