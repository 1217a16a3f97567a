// The flags of the cost-leak rules' limits (cost_leaks.h), kept out of
// flag_table.cpp for its size; ServeFlags() lists them last, in the cluster
// audit's section, and `ray-webhook audit` takes them too.
//
// Contract: entries like every ServeFlag's; each default's reason is in its help.
#pragma once

#include <span>
#include <string_view>

#include "flag_table.h"

namespace ray_webhook {

inline constexpr std::string_view kAuditFlagSection = "cluster audit (needs list RBAC: deploy/overlays/audit)";

std::span<const ServeFlag> CostLeakFlags();

}  // namespace ray_webhook
