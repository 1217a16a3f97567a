#include "ray_object_decoder.h"

#include "object_meta_decoder.h"
#include "ray_cluster_spec_decoder.h"

namespace ray_webhook {
namespace {

// The walk every kind shares: metadata, and spec handed to decode_spec(spec)
// once reset and known to be an object.
template <typename DecodeSpec>
void DecodeKind(od::object obj, JsonReader& r, RayObjectKind kind, RayObject& out, DecodeSpec&& decode_spec) {
  out = RayObject{};
  out.kind = kind;
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (key == "metadata") {
      DecodeObjectMeta(v, r, out.metadata);
    } else if (key == "spec") {
      out.cluster.reset();
      out.uses_cluster_selector = false;
      od::object spec;
      if (r.Object(v, "spec", &spec)) decode_spec(spec);
    }
  });
}

// A RayClusterSpec nested in the object's spec, at path; prefix is path and a
// dot, spelled out by the caller so that no path is built unless it is reported.
void DecodeNestedClusterSpec(od::value v, std::string_view path, std::string_view prefix, JsonReader& r,
                             RayObject& out) {
  out.cluster.reset();
  od::object o;
  if (!r.Object(v, path, &o)) return;
  JsonReader inner;
  DecodeClusterSpec(o, inner, out.cluster.emplace());
  inner.Prefix(prefix);
  r.Adopt(inner);
}

}  // namespace

void DecodeRayCluster(od::object obj, JsonReader& r, RayObject& out) {
  DecodeKind(obj, r, RayObjectKind::kRayCluster, out, [&](od::object spec) {
    JsonReader inner;
    DecodeClusterSpec(spec, inner, out.cluster.emplace());
    inner.Prefix("spec.");
    r.Adopt(inner);
  });
}

void DecodeRayJob(od::object obj, JsonReader& r, RayObject& out) {
  DecodeKind(obj, r, RayObjectKind::kRayJob, out, [&](od::object spec) {
    r.Fields(spec, [&](std::string_view k, od::value f) {
      if (k == "rayClusterSpec") {
        DecodeNestedClusterSpec(f, "spec.rayClusterSpec", "spec.rayClusterSpec.", r, out);
      } else if (k == "clusterSelector") {
        StringMap selector;
        r.Map(f, "spec.clusterSelector", &selector);
        out.uses_cluster_selector = !selector.empty();
      }
    });
  });
}

void DecodeRayService(od::object obj, JsonReader& r, RayObject& out) {
  DecodeKind(obj, r, RayObjectKind::kRayService, out, [&](od::object spec) {
    r.Fields(spec, [&](std::string_view k, od::value f) {
      if (k == "rayClusterConfig") {
        DecodeNestedClusterSpec(f, "spec.rayClusterConfig", "spec.rayClusterConfig.", r, out);
      }
    });
  });
}

void DecodeRayCronJob(od::object obj, JsonReader& r, RayObject& out) {
  DecodeKind(obj, r, RayObjectKind::kRayCronJob, out, [&](od::object spec) {
    r.Fields(spec, [&](std::string_view k, od::value f) {
      if (k != "jobTemplate") return;
      od::object job;
      if (!r.Object(f, "spec.jobTemplate", &job)) return;
      r.Fields(job, [&](std::string_view jk, od::value jf) {
        if (jk == "rayClusterSpec") {
          DecodeNestedClusterSpec(jf, "spec.jobTemplate.rayClusterSpec", "spec.jobTemplate.rayClusterSpec.", r, out);
        } else if (jk == "clusterSelector") {
          StringMap selector;
          r.Map(jf, "spec.jobTemplate.clusterSelector", &selector);
          out.uses_cluster_selector = !selector.empty();
        }
      });
    });
  });
}

void DecodeRayObject(od::object obj, JsonReader& r, RayObjectKind kind, RayObject& out) {
  switch (kind) {
    case RayObjectKind::kRayCluster: return DecodeRayCluster(obj, r, out);
    case RayObjectKind::kRayJob: return DecodeRayJob(obj, r, out);
    case RayObjectKind::kRayService: return DecodeRayService(obj, r, out);
    case RayObjectKind::kRayCronJob: return DecodeRayCronJob(obj, r, out);
  }
}

}  // namespace ray_webhook
