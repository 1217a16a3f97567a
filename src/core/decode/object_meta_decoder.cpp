#include "object_meta_decoder.h"

#include "lenient_fields.h"

namespace ray_webhook {

void DecodeObjectMeta(od::value v, JsonReader& r, ObjectMeta& meta) {
  od::object o;
  if (!r.Object(v, "metadata", &o)) return;
  r.Fields(o, [&](std::string_view k, od::value m) {
    if (k == "name") {
      r.String(m, "metadata.name", &meta.name);
    } else if (k == "generateName") {
      r.String(m, "metadata.generateName", &meta.generate_name);
    } else if (k == "namespace") {
      r.String(m, "metadata.namespace", &meta.namespace_name);
    } else if (k == "labels") {
      r.Map(m, "metadata.labels", &meta.labels);
    } else if (k == "annotations") {
      r.Map(m, "metadata.annotations", &meta.annotations);
    } else if (k == "deletionTimestamp") {
      // Only whether it is set matters; its value is the API server's, and not read.
      od::json_type t;
      if (r.Ok(m.type().get(t))) meta.deletion_requested = t != od::json_type::null;
    } else if (k == "creationTimestamp") {
      // The API server's to write, so leniently: kubectl shows null for an object not yet created.
      LenientString(m, r, &meta.creation_timestamp);
    }
  });
}

}  // namespace ray_webhook
