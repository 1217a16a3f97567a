#include "spec_validation.h"

#include "spec_json.h"
#include "spec_rules.h"

namespace ray_webhook {

namespace {

unsigned KindBit(RayObjectKind kind) {
  switch (kind) {
    case RayObjectKind::kRayCluster: return kSpecRayCluster;
    case RayObjectKind::kRayJob: return kSpecRayJob;
    case RayObjectKind::kRayService: return kSpecRayService;
    case RayObjectKind::kRayCronJob: return kSpecRayCronJob;
  }
  return 0;
}

bool InClusterTable(const SpecRule& rule) {
  const std::span<const SpecRule> table = RayClusterSpecRules();
  return !table.empty() && &rule >= table.data() && &rule < table.data() + table.size();
}

void Run(const SpecRule& rule, spec_json::Json object, RayObjectKind kind, const KubeRayTarget& target,
         std::vector<SpecFinding>& out) {
  if ((rule.kinds & KindBit(kind)) == 0) return;
  const std::string_view path = ClusterSpecPath(kind);
  spec_json::Json cluster_spec = spec_json::At(object, path);
  if (!cluster_spec.IsObject()) cluster_spec = spec_json::Json();
  if (!cluster_spec && InClusterTable(rule)) return;
  rule.check(SpecContext{object, kind, cluster_spec, path, target}, out);
}

}  // namespace

bool SpecRuleApplies(const SpecRule& rule, const KubeRayTarget& target) {
  if (target.version < rule.since) return false;
  if (rule.until != KubeRayVersion{} && !(target.version < rule.until)) return false;
  if (rule.gate.empty()) return true;
  const bool needs_off = rule.gate.front() == '!';
  const bool on = target.GateEnabled(needs_off ? rule.gate.substr(1) : rule.gate);
  return on != needs_off;
}

std::vector<const SpecRule*> AllSpecRules() {
  std::vector<const SpecRule*> all;
  for (const std::span<const SpecRule> table :
       {RayClusterSpecRules(), RayJobSpecRules(), RayServiceSpecRules(), RayCronJobSpecRules()}) {
    for (const SpecRule& rule : table) all.push_back(&rule);
  }
  return all;
}

const SpecRule* FindSpecRule(std::string_view id) {
  for (const SpecRule* rule : AllSpecRules()) {
    if (rule->id == id) return rule;
  }
  return nullptr;
}

std::vector<SpecFinding> CheckSpec(spec_json::Json object, RayObjectKind kind, const KubeRayTarget& target) {
  std::vector<SpecFinding> out;
  // Without the RayCronJob gate the operator runs no RayCronJob controller, so nothing checks a
  // RayCronJob, its job template and cluster included (ray-operator/main.go:300@v1.6.2).
  if (kind == RayObjectKind::kRayCronJob && !target.GateEnabled("RayCronJob")) return out;
  for (const SpecRule* rule : AllSpecRules()) {
    if (SpecRuleApplies(*rule, target)) Run(*rule, object, kind, target, out);
  }
  return out;
}

std::vector<SpecFinding> CheckSpecRule(const SpecRule& rule, spec_json::Json object, RayObjectKind kind,
                                       const KubeRayTarget& target) {
  std::vector<SpecFinding> out;
  Run(rule, object, kind, target, out);
  return out;
}

}  // namespace ray_webhook
