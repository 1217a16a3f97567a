// The core's view of a Pod (and of a Pod template): the fields the rules read.
//
// Contract: plain data, no parser types. Every string_view points into the
// buffer of the ReviewDecoder that produced it (or, in tests, into a builder).
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace ray_webhook {

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
  // resources.requests and resources.limits, each quantity as written ("500m", "2", "16Gi").
  // Read in the templates of ray.io objects only (what the audit counts a RayCluster holding by),
  // so that a Pod's admission reads no more than it did; empty elsewhere.
  std::vector<std::pair<std::string_view, std::string_view>> requests, limits;
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
  // metadata.deletionTimestamp is set (any value but null): the object is being deleted.
  bool deletion_requested = false;
  // metadata.creationTimestamp as the API server wrote it (RFC 3339); empty when absent or not a
  // string. Read for the audit of existing objects; an object under admission has none yet.
  std::string_view creation_timestamp;
};

struct Pod {
  ObjectMeta metadata;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  std::vector<Container> ephemeral_containers;
  // status.phase ("Pending", "Running", "Succeeded", ...); empty when absent or not a string.
  // Read for the audit of existing Pods; a Pod under admission has no status yet.
  std::string_view phase;
};

struct GroupVersionKind {
  std::string_view group;
  std::string_view version;
  std::string_view kind;
};

}  // namespace ray_webhook
