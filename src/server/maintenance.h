// Maintenance: the server's housekeeping thread, from Start() until Stop().
//
// Contract: every 250 ms it exports the connection counters; every
// reload_interval it re-reads the serving certificate (a new pair goes into
// service for the next handshakes; a failed read is counted every time,
// logged when its reason changes, and the pair in service stays); every 5 s
// it gives back the buffers of decoders that large reviews grew and that
// have been idle since. Stop() (or the destructor) returns once the thread
// has finished its round and joined.
#pragma once

#include <chrono>
#include <condition_variable>
#include <string>
#include <thread>

#include "connection_counters.h"
#include "ray_webhook/core/decode/review_decoder_pool.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/server/metrics.h"
#include "ray_webhook/thread_annotations.h"
#include "ray_webhook/tls/serving_certificate.h"

namespace ray_webhook {

class Maintenance {
 public:
  Maintenance(ServingCertificate& certificate, Metrics& metrics, ReviewDecoderPool& decoders,
              ConnectionCounters& counters, std::chrono::milliseconds reload_interval);
  ~Maintenance();
  Maintenance(const Maintenance&) = delete;
  Maintenance& operator=(const Maintenance&) = delete;

  void Start();
  void Stop();

 private:
  void Run();
  void ReloadCertificate();

  ServingCertificate& certificate_;
  Metrics& metrics_;
  ReviewDecoderPool& decoders_;
  ConnectionCounters& counters_;
  const std::chrono::milliseconds reload_interval_;
  std::string last_certificate_error_;  // the thread's own
  Mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ray_webhook
