// RaiseOpenFileLimit: lets the process hold as many connections as it may.
//
// Contract: raises the soft RLIMIT_NOFILE to the hard limit (many container
// runtimes start processes at a soft 1024, which 1,000 idle connections
// exhaust) and returns the soft limit in force afterwards. Never lowers it.
#pragma once

#include <cstddef>

namespace ray_webhook {

std::size_t RaiseOpenFileLimit();

}  // namespace ray_webhook
