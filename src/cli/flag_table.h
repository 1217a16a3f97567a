// ServeFlags: the table of serve's flags, the one place a flag is defined.
//
// Contract: each entry has its name, its argument as the usage shows it, the
// usage section it is listed under, a one-line help for --help, a longer
// Markdown description for the reference (docs/flags.md), the function that
// parses a value into ServeSettings (or says, in one line, what is wrong with
// it) and the one that prints its default from default settings. Parsing,
// the unknown-flag check, --help and the flag reference are all driven by
// this table, so no flag or default is written twice. Entries are in the
// order the usage lists them; a section is a run of adjacent entries.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "command.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

// What `serve` is given while its flags are read: the command, and the flags
// whose meaning depends on others or on the environment, settled at the end.
struct ServeSettings {
  Command command;
  std::optional<std::string> cluster_domain, api_server, token_file, ca_file, cert_dir;
};

// One flag of `serve`. set parses the value into the settings or says what is
// wrong with it; shown prints the default from default settings ("" for none).
struct ServeFlag {
  std::string_view name;       // "--port"
  std::string_view argument;   // "N", as the usage shows it
  std::string_view section;    // the usage heading it is listed under
  std::string_view help;       // one line of --help
  std::string_view reference;  // its row of docs/flags.md: Markdown, links relative to docs/
  Status (*set)(ServeSettings& settings, std::string_view value);
  std::string (*shown)(const ServeSettings& defaults);
};

std::span<const ServeFlag> ServeFlags();

// The entry named `name` ("--port"), or nullptr.
const ServeFlag* FindServeFlag(std::string_view name);

// The flags of serve that audit takes too: the API, the cluster domain, the spec checks and the
// cost-leak limits.
std::span<const std::string_view> AuditSharedFlags();

}  // namespace ray_webhook
