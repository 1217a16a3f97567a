#include "pod_decoder.h"

#include "container_decoder.h"
#include "object_meta_decoder.h"

namespace ray_webhook {

void DecodePod(od::object obj, JsonReader& r, Pod& pod, bool read_resources) {
  ObjectMeta& meta = pod.metadata;
  meta.name = meta.generate_name = meta.namespace_name = {};
  meta.labels.clear();
  meta.annotations.clear();
  meta.deletion_requested = false;
  meta.creation_timestamp = {};
  pod.phase = {};
  bool containers = false, init_containers = false, ephemeral_containers = false;
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (key == "metadata") {
      DecodeObjectMeta(v, r, meta);
    } else if (key == "spec") {
      od::object spec;
      if (!r.Object(v, "spec", &spec)) return;
      r.Fields(spec, [&](std::string_view k, od::value list) {
        if (k == "containers") {
          containers = true;
          DecodeContainers(list, "spec.containers", r, &pod.containers, read_resources);
        } else if (k == "initContainers") {
          init_containers = true;
          DecodeContainers(list, "spec.initContainers", r, &pod.init_containers, read_resources);
        } else if (k == "ephemeralContainers") {
          ephemeral_containers = true;
          DecodeContainers(list, "spec.ephemeralContainers", r, &pod.ephemeral_containers);
        }
      });
    } else if (key == "status") {
      // Read leniently: a status the API server wrote is no part of what admission judges, so a
      // malformed one is no error, only no phase.
      od::json_type t;
      od::object status;
      if (!r.Ok(v.type().get(t)) || t != od::json_type::object || !r.Ok(v.get_object().get(status))) return;
      r.Fields(status, [&](std::string_view k, od::value phase) {
        od::json_type pt;
        if (k == "phase" && r.Ok(phase.type().get(pt)) && pt == od::json_type::string)
          r.Ok(phase.get_string().get(pod.phase));
      });
    }
  });
  if (!containers) pod.containers.clear();
  if (!init_containers) pod.init_containers.clear();
  if (!ephemeral_containers) pod.ephemeral_containers.clear();
}

}  // namespace ray_webhook
