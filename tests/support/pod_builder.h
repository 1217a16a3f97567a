// Builds core Pod values directly, so rule tests need no JSON at all.
// Strings are owned by the builder; the Pod's views point into it.
#pragma once

#include <deque>
#include <string>

#include "ray_webhook/core/model/admission_request.h"

namespace ray_webhook::testing {

// Move-only: the Pod's views point into this builder's strings, so the
// builder must outlive every Pod or request made from it.
class PodBuilder {
 public:
  PodBuilder() = default;
  PodBuilder(const PodBuilder&) = delete;
  PodBuilder& operator=(const PodBuilder&) = delete;
  PodBuilder(PodBuilder&&) = default;
  PodBuilder& operator=(PodBuilder&&) = default;

  std::string_view Keep(std::string s) { return store_.emplace_back(std::move(s)); }

  PodBuilder& Label(std::string k, std::string v) {
    pod_.metadata.labels.emplace_back(Keep(std::move(k)), Keep(std::move(v)));
    return *this;
  }
  PodBuilder& Annotation(std::string k, std::string v) {
    pod_.metadata.annotations.emplace_back(Keep(std::move(k)), Keep(std::move(v)));
    return *this;
  }
  PodBuilder& RayWorker(std::string cluster, std::string group = "workergroup") {
    return Label("ray.io/cluster", std::move(cluster))
        .Label("ray.io/node-type", "worker")
        .Label("ray.io/group", std::move(group));
  }
  PodBuilder& RayHead(std::string cluster) {
    return Label("ray.io/cluster", std::move(cluster))
        .Label("ray.io/node-type", "head")
        .Label("ray.io/group", "headgroup");
  }
  // Adds a container to spec.containers and makes it the one later calls edit.
  PodBuilder& Container(std::string name) { return Into(pod_.containers, std::move(name)); }
  PodBuilder& InitContainer(std::string name) { return Into(pod_.init_containers, std::move(name)); }
  PodBuilder& EphemeralContainer(std::string name) { return Into(pod_.ephemeral_containers, std::move(name)); }

  PodBuilder& Env(std::string name, std::string value) {
    current_->has_env_list = true;
    current_->env.push_back({Keep(std::move(name)), Keep(std::move(value))});
    return *this;
  }
  PodBuilder& EnvFrom(std::string name) {  // an entry with valueFrom
    current_->has_env_list = true;
    current_->env.push_back({Keep(std::move(name)), std::nullopt});
    return *this;
  }
  PodBuilder& EmptyEnvList() {
    current_->has_env_list = true;
    return *this;
  }
  PodBuilder& Name(std::string name) {
    pod_.metadata.name = Keep(std::move(name));
    return *this;
  }
  PodBuilder& GenerateName(std::string prefix) {
    pod_.metadata.generate_name = Keep(std::move(prefix));
    return *this;
  }
  PodBuilder& Image(std::string image) {
    current_->image = Keep(std::move(image));
    return *this;
  }
  PodBuilder& Command(std::string s) {
    current_->command.push_back(Keep(std::move(s)));
    return *this;
  }
  PodBuilder& Arg(std::string s) {
    current_->args.push_back(Keep(std::move(s)));
    return *this;
  }
  PodBuilder& Mount(std::string volume, std::string path) {
    current_->volume_mounts.push_back({Keep(std::move(volume)), Keep(std::move(path))});
    return *this;
  }

  const Pod& pod() const { return pod_; }

 private:
  PodBuilder& Into(std::vector<ray_webhook::Container>& list, std::string name) {
    list.emplace_back();
    list.back().name = Keep(std::move(name));
    current_ = &list.back();
    return *this;
  }

  std::deque<std::string> store_;  // deque: views stay valid as it grows
  Pod pod_;
  ray_webhook::Container* current_ = nullptr;
};

}  // namespace ray_webhook::testing
