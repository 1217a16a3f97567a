#include "maintenance.h"

#include <spdlog/spdlog.h>

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
// How often the thread wakes: the connection gauges are at most this old.
constexpr auto kTick = std::chrono::milliseconds(250);
// A decoder grown by a large review keeps its size while large reviews keep
// coming (regrowing costs page faults on every one), and gives it back within
// two of these once they stop (ReviewDecoderPool::ShrinkIdle).
constexpr auto kDecoderShrinkInterval = std::chrono::seconds(5);

}  // namespace

Maintenance::Maintenance(ServingCertificate& certificate, Metrics& metrics, ReviewDecoderPool& decoders,
                         ConnectionCounters& counters, std::chrono::milliseconds reload_interval)
    : certificate_(certificate),
      metrics_(metrics),
      decoders_(decoders),
      counters_(counters),
      reload_interval_(reload_interval) {}

Maintenance::~Maintenance() { Stop(); }

void Maintenance::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Maintenance::Stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Maintenance::Run() {
  auto next_reload = Clock::now() + reload_interval_;
  auto next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
  MutexLock lock(&mutex_);
  while (!stopping_) {
    lock.WaitUntil(cv_, Clock::now() + kTick);
    lock.Unlock();
    counters_.Export();
    if (Clock::now() >= next_reload) {
      ReloadCertificate();
      next_reload = Clock::now() + reload_interval_;
    }
    if (Clock::now() >= next_decoder_shrink) {
      if (std::size_t shrunk = decoders_.ShrinkIdle()) {
        spdlog::debug("gave back the buffers of {} idle decoder(s) grown by large reviews", shrunk);
      }
      next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
    }
    lock.Lock();
  }
}

void Maintenance::ReloadCertificate() {
  const Result<bool> reloaded = certificate_.Reload();
  if (!reloaded.ok()) {
    // Counted each time; logged when the reason changes, not every poll.
    metrics_.CountCertificateRead(false);
    if (reloaded.error() != last_certificate_error_) {
      spdlog::error("serving certificate not reloaded, the current one stays in service: {}", reloaded.error());
      last_certificate_error_ = reloaded.error();
    }
  } else if (*reloaded) {
    metrics_.CountCertificateRead(true);
    metrics_.SetCertificateExpiration(certificate_.NotAfterUnixSeconds());
    last_certificate_error_.clear();
    spdlog::info("serving certificate loaded: {}", certificate_.Describe());
  }
}

}  // namespace ray_webhook
