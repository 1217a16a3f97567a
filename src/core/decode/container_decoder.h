// The decoders of a Pod's containers and of lists of volume mounts, shared by
// the Pod decoder and the RayCluster spec decoder (autoscalerOptions).
//
// Contract: each reads the value it is given (null or absent is an empty
// list) with the caller's JsonReader, and reports errors at the paths it is
// given, which are relative to the object the caller decodes. DecodeContainers
// refills *out in place: elements left from the previous review keep their
// lists' storage, so a review like the last one allocates nothing here.
#pragma once

#include <string_view>
#include <vector>

#include "ray_webhook/core/json/json_reader.h"
#include "ray_webhook/core/model/pod_view.h"

namespace ray_webhook {

// path: where the list is, e.g. "spec.containers"; an error in the third
// container is reported at "spec.containers[2].env[].value" and the like.
// read_resources: also keep resources.requests and .limits (leniently), which only the templates of
// ray.io objects need, so that a Pod's admission does not pay for them.
void DecodeContainers(od::value v, std::string_view path, JsonReader& r, std::vector<Container>* out,
                      bool read_resources = false);

// Where a list of volume mounts and its fields are, for errors.
struct MountPaths {
  std::string_view list, name, mount_path;
};
void DecodeVolumeMounts(od::value v, const MountPaths& path, JsonReader& r, std::vector<VolumeMount>* out);

}  // namespace ray_webhook
