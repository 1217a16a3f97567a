// What the core decided about one review: allow or deny, JSON Patch
// operations, and warnings.
//
// Contract: plain data built by the rules and read by the response encoder.
// Operations are RFC 6902 and are applied by kube-apiserver with
// evanphx/json-patch against the object exactly as it was sent, so paths
// refer to the original document.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ray_webhook/core/model/policy_config.h"

namespace ray_webhook {

// One entry of a container's env list, as a patch adds it.
struct EnvEntry {
  std::string name;
  std::string value;
  friend bool operator==(const EnvEntry&, const EnvEntry&) = default;
};

// What a patch operation carries: nothing ("remove"), a string, one env entry,
// or a new env list. Plain types rather than a JSON tree: building and
// freeing trees cost a third of a review.
using PatchValue = std::variant<std::monostate, std::string, EnvEntry, std::vector<EnvEntry>>;

struct PatchOperation {
  // "add", "replace" or "remove", always a string literal; lists are appended
  // to, never replaced. A view, not a string: a list of eight operations then
  // fits in an allocation that glibc serves from its per-thread cache.
  std::string_view op;
  std::string path;
  PatchValue value;
};

// What a patch did, for logs and metrics; one entry per change.
enum class Mutation {
  kFqRayIpAdded,
  kRayIpAdded,
  kAddressRewritten,
  kRayAddressRewritten,
  kHeadNamed,
  kGeneratedStartCommandRewritten,  // KUBERAY_GEN_RAY_START_CMD qualified with the command that carries it
};

std::string_view MutationName(Mutation mutation);

// A rule's finding that denies when its mode is enforce. Made by one of the
// four kinds below, which controller-runtime's admission helpers also use;
// the code and reason reach the user as the Status of the refused request.
struct Denial {
  int code = 422;  // kube-apiserver forces codes below 400 to 400
  std::string reason = "Invalid";
  std::string rule;  // which rule denied, for logs and metrics
  std::string message;

  // The object is wrong as written (422 Invalid).
  static Denial Invalid(std::string_view rule, std::string message) {
    return {422, "Invalid", std::string(rule), std::move(message)};
  }
  // The object is fine but clashes with one the cluster has (409 Conflict).
  static Denial Conflict(std::string_view rule, std::string message) {
    return {409, "Conflict", std::string(rule), std::move(message)};
  }
  // The object breaks a rule of this cluster's policy (403 Forbidden).
  static Denial Forbidden(std::string_view rule, std::string message) {
    return {403, "Forbidden", std::string(rule), std::move(message)};
  }
  // The webhook could not decide now; retrying may succeed (503).
  static Denial Unavailable(std::string_view rule, std::string message) {
    return {503, "ServiceUnavailable", std::string(rule), std::move(message)};
  }
};

struct Decision {
  bool allowed = true;
  Denial denial;  // meaningful only when !allowed
  std::vector<PatchOperation> patch;
  std::vector<Mutation> mutations;
  std::vector<std::string> warnings;

  void Deny(Denial d) {
    allowed = false;
    denial = std::move(d);
    patch.clear();
    mutations.clear();
  }

  // A rule's finding under its mode: enforce denies, warn allows with a
  // warning that starts with the rule's name, off ignores it. Called by
  // PodPolicy alone: rules return findings and never read their mode.
  void Apply(RuleMode mode, Denial d);
};

}  // namespace ray_webhook
