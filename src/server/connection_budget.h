// ConnectionBudget: how many connections the server may hold open at once.
//
// Contract: raises the open-file limit as far as it goes (RaiseOpenFileLimit),
// then answers `requested` (--max-connections) when the limit leaves room for
// it and for the descriptors the server needs besides (listeners, the event
// loops' own, certificate and token reads, the Kubernetes API connections);
// otherwise the limit less that reserve, never fewer than the reserve itself,
// with a warning naming both figures. The loop holds no more than the
// budget: over it, it sheds an idle connection or refuses (ConnectionLoop).
#pragma once

#include <cstddef>

namespace ray_webhook {

std::size_t ConnectionBudget(std::size_t requested);

}  // namespace ray_webhook
