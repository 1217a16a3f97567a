#include "pod_decoder.h"

#include "container_decoder.h"
#include "object_meta_decoder.h"

namespace ray_webhook {

void DecodePod(od::object obj, JsonReader& r, Pod& pod) {
  ObjectMeta& meta = pod.metadata;
  meta.name = meta.generate_name = meta.namespace_name = {};
  meta.labels.clear();
  meta.annotations.clear();
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
          DecodeContainers(list, "spec.containers", r, &pod.containers);
        } else if (k == "initContainers") {
          init_containers = true;
          DecodeContainers(list, "spec.initContainers", r, &pod.init_containers);
        } else if (k == "ephemeralContainers") {
          ephemeral_containers = true;
          DecodeContainers(list, "spec.ephemeralContainers", r, &pod.ephemeral_containers);
        }
      });
    }
  });
  if (!containers) pod.containers.clear();
  if (!init_containers) pod.init_containers.clear();
  if (!ephemeral_containers) pod.ephemeral_containers.clear();
}

}  // namespace ray_webhook
