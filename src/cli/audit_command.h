// RunAudit: `ray-webhook audit`, from a parsed command to an exit code.
//
// Contract: reads the command's files in order (ManifestFiles) or, without
// files, the live cluster (AuditCluster, through command.config.kube_api),
// feeds one Auditor, and prints the report on `out` as a table or JSON.
// Returns 0 when nothing was found, 1 on findings, 2 when an input could not
// be read or is not usable (the error, naming the file and document, goes to
// `err` and nothing to `out`). Never throws.
#pragma once

#include <istream>
#include <ostream>

#include "command_line.h"

namespace ray_webhook {

int RunAudit(const Command& command, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace ray_webhook
