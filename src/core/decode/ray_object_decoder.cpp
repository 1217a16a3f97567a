#include "ray_object_decoder.h"

#include <cstddef>
#include <type_traits>

#include "lenient_fields.h"
#include "object_meta_decoder.h"
#include "ray_cluster_spec_decoder.h"

namespace ray_webhook {
namespace {

// The walk every kind shares: metadata, spec handed to decode_spec(spec) once
// reset and known to be an object, and each field of status to
// decode_status(key, value), leniently: the API server writes status, so a
// malformed one is no admission error, only nothing read.
// A RayCronJob's status says nothing the rules need: decode_status is nullptr. read_status false
// skips the status (a RayCluster's under review: only the audit reads it).
template <typename DecodeSpec, typename DecodeStatus = std::nullptr_t>
void DecodeKind(od::object obj, JsonReader& r, RayObjectKind kind, RayObject& out, DecodeSpec&& decode_spec,
                DecodeStatus&& decode_status = nullptr, bool read_status = true) {
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
    } else if constexpr (!std::is_same_v<std::decay_t<DecodeStatus>, std::nullptr_t>) {
      if (read_status && key == "status") LenientFields(v, r, decode_status);
    }
  });
}

// A RayClusterSpec nested in the object's spec, at path; prefix is path and a
// dot, spelled out by the caller so that no path is built unless it is reported.
void DecodeNestedClusterSpec(od::value v, std::string_view path, std::string_view prefix, JsonReader& r, RayObject& out,
                             bool read_resources) {
  out.cluster.reset();
  od::object o;
  if (!r.Object(v, path, &o)) return;
  JsonReader inner;
  DecodeClusterSpec(o, inner, out.cluster.emplace(), read_resources);
  inner.Prefix(prefix);
  r.Adopt(inner);
}

}  // namespace

void DecodeRayCluster(od::object obj, JsonReader& r, RayObject& out, bool read_resources) {
  DecodeKind(
      obj, r, RayObjectKind::kRayCluster, out,
      [&](od::object spec) {
        JsonReader inner;
        DecodeClusterSpec(spec, inner, out.cluster.emplace(), read_resources);
        inner.Prefix("spec.");
        r.Adopt(inner);
      },
      [&](std::string_view k, od::value f) {
        // ray-operator/apis/ray/v1/raycluster_types.go (v1.6.2, v1.7.0): Conditions, type RayClusterSuspended.
        if (k != "conditions") return;
        LenientElements(f, r, [&](od::value c) {
          std::string_view type, status, since;
          LenientFields(c, r, [&](std::string_view ck, od::value cv) {
            if (ck == "type") {
              LenientString(cv, r, &type);
            } else if (ck == "status") {
              LenientString(cv, r, &status);
            } else if (ck == "lastTransitionTime") {
              LenientString(cv, r, &since);
            }
          });
          if (type == "RayClusterSuspended" && status == "True") out.cluster_state.suspended_since = since;
        });
      },
      read_resources);
}

void DecodeRayJob(od::object obj, JsonReader& r, RayObject& out, bool read_resources) {
  DecodeKind(
      obj, r, RayObjectKind::kRayJob, out,
      [&](od::object spec) {
        r.Fields(spec, [&](std::string_view k, od::value f) {
          if (k == "rayClusterSpec") {
            DecodeNestedClusterSpec(f, "spec.rayClusterSpec", "spec.rayClusterSpec.", r, out, read_resources);
          } else if (k == "clusterSelector") {
            StringMap selector;
            r.Map(f, "spec.clusterSelector", &selector);
            out.uses_cluster_selector = !selector.empty();
          } else if (k == "shutdownAfterJobFinishes") {
            LenientBool(f, r, &out.job.shutdown_after_job_finishes);
          } else if (k == "ttlSecondsAfterFinished") {
            LenientInt(f, r, &out.job.ttl_seconds_after_finished);
          } else if (k == "suspend") {
            LenientBool(f, r, &out.job.suspend);  // ray-operator/apis/ray/v1/rayjob_types.go (v1.6.2, v1.7.0)
          }
        });
      },
      [&](std::string_view k, od::value f) {
        // rayjob_types.go (KubeRay v1.6.2), RayJobStatus.
        if (k == "jobDeploymentStatus") {
          LenientString(f, r, &out.job.deployment_status);
        } else if (k == "endTime") {
          LenientString(f, r, &out.job.end_time);
        } else if (k == "rayClusterName") {
          LenientString(f, r, &out.job.cluster_name);
        } else if (k == "startTime") {
          LenientString(f, r, &out.job.start_time);
        }
      });
}

void DecodeRayService(od::object obj, JsonReader& r, RayObject& out, bool read_resources) {
  DecodeKind(
      obj, r, RayObjectKind::kRayService, out,
      [&](od::object spec) {
        r.Fields(spec, [&](std::string_view k, od::value f) {
          if (k == "rayClusterConfig") {
            DecodeNestedClusterSpec(f, "spec.rayClusterConfig", "spec.rayClusterConfig.", r, out, read_resources);
          } else if (k == "suspend") {
            LenientBool(f, r, &out.service.suspend);  // ray-operator/apis/ray/v1/rayservice_types.go, v1.7.0 on
          }
        });
      },
      [&](std::string_view k, od::value f) {
        // rayservice_types.go (KubeRay v1.6.2): RayServiceStatuses' two RayServiceStatus.
        std::string_view* cluster = k == "activeServiceStatus"    ? &out.service.active_cluster
                                    : k == "pendingServiceStatus" ? &out.service.pending_cluster
                                                                  : nullptr;
        if (cluster == nullptr) return;
        LenientFields(f, r, [&](std::string_view sk, od::value name) {
          if (sk == "rayClusterName") LenientString(name, r, cluster);
        });
      });
}

void DecodeRayCronJob(od::object obj, JsonReader& r, RayObject& out, bool read_resources) {
  DecodeKind(obj, r, RayObjectKind::kRayCronJob, out, [&](od::object spec) {
    r.Fields(spec, [&](std::string_view k, od::value f) {
      if (k != "jobTemplate") return;
      od::object job;
      if (!r.Object(f, "spec.jobTemplate", &job)) return;
      r.Fields(job, [&](std::string_view jk, od::value jf) {
        if (jk == "rayClusterSpec") {
          DecodeNestedClusterSpec(jf, "spec.jobTemplate.rayClusterSpec", "spec.jobTemplate.rayClusterSpec.", r, out,
                                  read_resources);
        } else if (jk == "clusterSelector") {
          StringMap selector;
          r.Map(jf, "spec.jobTemplate.clusterSelector", &selector);
          out.uses_cluster_selector = !selector.empty();
        }
      });
    });
  });
}

void DecodeRayObject(od::object obj, JsonReader& r, RayObjectKind kind, RayObject& out, bool read_resources) {
  switch (kind) {
    case RayObjectKind::kRayCluster: return DecodeRayCluster(obj, r, out, read_resources);
    case RayObjectKind::kRayJob: return DecodeRayJob(obj, r, out, read_resources);
    case RayObjectKind::kRayService: return DecodeRayService(obj, r, out, read_resources);
    case RayObjectKind::kRayCronJob: return DecodeRayCronJob(obj, r, out, read_resources);
  }
}

}  // namespace ray_webhook
