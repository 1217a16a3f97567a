#include "ray_cluster_spec_decoder.h"

#include <string>

#include "container_decoder.h"
#include "lenient_fields.h"
#include "pod_decoder.h"

namespace ray_webhook {
namespace {

// A HeadGroupSpec or WorkerGroupSpec; error paths relative to the group.
void DecodeGroup(od::object obj, JsonReader& r, RayGroupSpec& group, bool worker, bool read_resources) {
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (worker && key == "groupName") {
      r.String(v, "groupName", &group.group_name);
    } else if (worker && key == "replicas") {
      LenientInt(v, r, &group.replicas);
    } else if (worker && key == "minReplicas") {
      LenientInt(v, r, &group.min_replicas);
    } else if (worker && key == "numOfHosts") {
      LenientInt(v, r, &group.num_of_hosts);
    } else if (worker && key == "suspend") {
      LenientBool(v, r, &group.suspend);
    } else if (key == "rayStartParams") {
      r.Map(v, "rayStartParams", &group.ray_start_params);
    } else if (key == "template") {
      od::object t;
      if (!r.Object(v, "template", &t)) return;
      JsonReader inner;
      DecodePod(t, inner, group.template_pod, read_resources);
      inner.Prefix("template.");
      r.Adopt(inner);
    }
  });
}

void DecodeAutoscalerOptions(od::value v, JsonReader& r, RayClusterSpecView& spec) {
  spec.autoscaler_volume_mounts.clear();
  od::object o;
  if (!r.Object(v, "autoscalerOptions", &o)) return;
  r.Fields(o, [&](std::string_view k, od::value f) {
    if (k != "volumeMounts") return;
    DecodeVolumeMounts(f,
                       {"autoscalerOptions.volumeMounts", "autoscalerOptions.volumeMounts[].name",
                        "autoscalerOptions.volumeMounts[].mountPath"},
                       r, &spec.autoscaler_volume_mounts);
  });
}

void DecodeAuthOptions(od::value v, JsonReader& r, RayClusterSpecView& spec) {
  spec.auth_mode = {};
  spec.enable_k8s_token_auth = false;
  od::object o;
  if (!r.Object(v, "authOptions", &o)) return;
  r.Fields(o, [&](std::string_view k, od::value f) {
    if (k == "mode") {
      r.String(f, "authOptions.mode", &spec.auth_mode);
    } else if (k == "enableK8sTokenAuth") {
      r.Bool(f, "authOptions.enableK8sTokenAuth", &spec.enable_k8s_token_auth);
    }
  });
}

void DecodeWorkerGroups(od::value v, JsonReader& r, RayClusterSpecView& spec, bool read_resources) {
  spec.worker_groups.clear();
  od::array groups;
  if (!r.Array(v, "workerGroupSpecs", &groups)) return;
  r.Objects(groups, "workerGroupSpecs", "expected an array of objects", [&](od::object g) {
    JsonReader inner;
    DecodeGroup(g, inner, spec.worker_groups.emplace_back(), true, read_resources);
    if (inner.failed()) inner.Prefix("workerGroupSpecs[" + std::to_string(spec.worker_groups.size() - 1) + "].");
    r.Adopt(inner);
  });
}

}  // namespace

void DecodeClusterSpec(od::object obj, JsonReader& r, RayClusterSpecView& spec, bool read_resources) {
  r.Fields(obj, [&](std::string_view key, od::value v) {
    if (key == "enableInTreeAutoscaling") {
      r.Bool(v, "enableInTreeAutoscaling", &spec.enable_in_tree_autoscaling);
    } else if (key == "autoscalerOptions") {
      DecodeAutoscalerOptions(v, r, spec);
    } else if (key == "authOptions") {
      DecodeAuthOptions(v, r, spec);
    } else if (key == "tlsOptions") {
      spec.tls_enabled = false;
      od::object o;
      if (!r.Object(v, "tlsOptions", &o)) return;
      r.Fields(o, [&](std::string_view k, od::value f) {
        if (k == "enabled") r.Bool(f, "tlsOptions.enabled", &spec.tls_enabled);
      });
    } else if (key == "headGroupSpec") {
      spec.head_group = {};
      od::object o;
      spec.has_head_group = r.Object(v, "headGroupSpec", &o);
      if (!spec.has_head_group) return;
      JsonReader inner;
      DecodeGroup(o, inner, spec.head_group, false, read_resources);
      inner.Prefix("headGroupSpec.");
      r.Adopt(inner);
    } else if (key == "workerGroupSpecs") {
      DecodeWorkerGroups(v, r, spec, read_resources);
    } else if (read_resources && key == "suspend") {
      LenientBool(v, r, &spec.suspend);  // ray-operator/apis/ray/v1/raycluster_types.go (v1.6.2, v1.7.0)
    }
  });
}

}  // namespace ray_webhook
