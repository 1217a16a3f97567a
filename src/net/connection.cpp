#include "connection.h"

#include <utility>

#include "event_loop.h"

namespace ray_webhook {

void Connection::RunBlocking(std::function<void()> work) { loop->StartJob(this, std::move(work)); }

bool Connection::Stopping() const { return loop->impl.stopping.load(); }

}  // namespace ray_webhook
