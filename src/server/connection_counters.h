// ConnectionCounters: the connection loop's running totals as metrics.
//
// Contract: Export() adds to Metrics what the loop counted since the last
// Export() (connections cut by their deadline, shed for room, refused,
// busy polls), sets the open-connection gauge, and logs a warning when
// connections were cut or refused. Safe to call from any thread: the
// maintenance thread calls it on its tick, and /metrics before it renders,
// so that a scrape sees the current figures.
#pragma once

#include <cstddef>

#include "ray_webhook/mutex.h"
#include "ray_webhook/net/connection_loop.h"
#include "ray_webhook/server/metrics.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

class ConnectionCounters {
 public:
  // max_connections: the budget in force, named in the refusal warning.
  ConnectionCounters(const ConnectionLoop& loop, Metrics& metrics, std::size_t max_connections)
      : loop_(loop), metrics_(metrics), max_connections_(max_connections) {}

  void Export();

 private:
  const ConnectionLoop& loop_;
  Metrics& metrics_;
  const std::size_t max_connections_;
  Mutex mutex_;
  std::size_t seen_cut_ GUARDED_BY(mutex_) = 0;
  std::size_t seen_shed_ GUARDED_BY(mutex_) = 0;
  std::size_t seen_refused_ GUARDED_BY(mutex_) = 0;
  std::size_t seen_polls_ GUARDED_BY(mutex_) = 0;
};

}  // namespace ray_webhook
