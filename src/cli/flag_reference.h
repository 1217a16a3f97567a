// FlagReference: docs/flags.md, rendered from the flag table.
//
// Contract: pure; the same table renders the same bytes, so a test can hold
// the committed docs/flags.md to it. The synopsis is the usage's own, each
// usage section becomes a Markdown table of its flags (argument, the default
// --help prints, the entry's reference text), and a cell's "|" is escaped.
// Only the prose around the tables is written here: how flags are written
// and what review and audit take.
#pragma once

#include <span>
#include <string>

#include "flag_table.h"

namespace ray_webhook {

// The reference of `flags`, in their order, under the usage's synopsis.
std::string FlagReferenceMarkdown(std::span<const ServeFlag> flags);

// The reference of ServeFlags(): what docs/flags.md holds.
std::string FlagReferenceMarkdown();

}  // namespace ray_webhook
