#include "connection_counters.h"

#include <spdlog/spdlog.h>

namespace ray_webhook {

void ConnectionCounters::Export() {
  MutexLock lock(&mutex_);
  const std::size_t cut = loop_.connections_cut(), shed = loop_.connections_shed(),
                    refused = loop_.connections_refused(), polls = loop_.busy_polls();
  if (cut > seen_cut_) {
    metrics_.CountConnectionsCut(cut - seen_cut_);
    spdlog::warn("closed {} connection(s) whose handshake or request ran past --request-timeout", cut - seen_cut_);
  }
  if (shed > seen_shed_) metrics_.CountConnectionsShed(shed - seen_shed_);
  if (refused > seen_refused_) {
    metrics_.CountConnectionsRefused(refused - seen_refused_);
    spdlog::warn("refused {} connection(s): --max-connections ({}) were open and none idle", refused - seen_refused_,
                 max_connections_);
  }
  if (polls > seen_polls_) metrics_.CountBusyPolls(polls - seen_polls_);
  seen_cut_ = cut;
  seen_shed_ = shed;
  seen_refused_ = refused;
  seen_polls_ = polls;
  metrics_.SetOpenConnections(loop_.connections());
}

}  // namespace ray_webhook
