#include "container_decoder.h"

#include <optional>
#include <string>

#include "lenient_fields.h"

namespace ray_webhook {
namespace {

void DecodeEnv(od::value v, JsonReader& r, Container& out) {
  out.env.clear();
  od::array env;
  out.has_env_list = r.Array(v, ".env", &env);
  if (!out.has_env_list) return;
  r.Objects(env, ".env", "expected an array of objects", [&](od::object var) {
    EnvVar& e = out.env.emplace_back();
    r.Fields(var, [&](std::string_view k, od::value value) {
      if (k == "name") {
        r.String(value, ".env[].name", &e.name);
      } else if (k == "value") {
        std::string_view s;
        bool present = false;
        r.StringOrNull(value, ".env[].value", &s, &present);
        e.value = present ? std::optional<std::string_view>(s) : std::nullopt;
      }
    });
  });
}

// Errors are reported relative to the container (".env: ...") and prefixed
// with the container's path by the caller.
void DecodeContainer(od::object c, JsonReader& r, Container& out, bool read_resources) {
  out.name = {};
  out.image = {};
  out.has_env_list = false;
  out.env.clear();
  out.command.clear();
  out.args.clear();
  out.volume_mounts.clear();
  out.requests.clear();
  out.limits.clear();
  r.Fields(c, [&](std::string_view key, od::value v) {
    if (key == "name") {
      r.String(v, ".name", &out.name);
    } else if (key == "image") {
      r.String(v, ".image", &out.image);
    } else if (key == "command") {
      r.Strings(v, ".command", &out.command);
    } else if (key == "args") {
      r.Strings(v, ".args", &out.args);
    } else if (key == "env") {
      DecodeEnv(v, r, out);
    } else if (key == "volumeMounts") {
      DecodeVolumeMounts(v, {".volumeMounts", ".volumeMounts[].name", ".volumeMounts[].mountPath"}, r,
                         &out.volume_mounts);
    } else if (read_resources && key == "resources") {
      LenientFields(v, r, [&](std::string_view k, od::value list) {
        if (k == "requests") {
          LenientQuantities(list, r, &out.requests);
        } else if (k == "limits") {
          LenientQuantities(list, r, &out.limits);
        }
      });
    }
  });
}

}  // namespace

void DecodeContainers(od::value v, std::string_view path, JsonReader& r, std::vector<Container>* out,
                      bool read_resources) {
  od::array list;
  if (!r.Array(v, path, &list)) {
    out->clear();
    return;
  }
  std::size_t i = 0;
  // Spelled out only on failure, so the common case allocates nothing for paths.
  auto here = [&] { return std::string(path) + "[" + std::to_string(i) + "]"; };
  for (auto item : list) {
    od::value e;
    od::json_type t;
    if (!r.Element(std::move(item), &e, &t)) return;
    od::object c;
    if (t != od::json_type::object) return r.Fail(here(), "expected an object");
    if (!r.Ok(e.get_object().get(c))) return;
    if (i == out->size()) out->emplace_back();
    DecodeContainer(c, r, (*out)[i], read_resources);
    if (r.failed()) {
      r.Prefix(here());
      return;
    }
    ++i;
  }
  out->resize(i);
}

void DecodeVolumeMounts(od::value v, const MountPaths& path, JsonReader& r, std::vector<VolumeMount>* out) {
  out->clear();
  od::array mounts;
  if (!r.Array(v, path.list, &mounts)) return;
  r.Objects(mounts, path.list, "expected an array of objects", [&](od::object m) {
    VolumeMount& vm = out->emplace_back();
    r.Fields(m, [&](std::string_view k, od::value value) {
      if (k == "name") {
        r.String(value, path.name, &vm.name);
      } else if (k == "mountPath") {
        r.String(value, path.mount_path, &vm.mount_path);
      }
    });
  });
}

}  // namespace ray_webhook
