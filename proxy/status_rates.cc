#include "proxy/status_rates.h"

namespace egw::proxy {

void ClassRates::sample(const GatewaySnapshot& snapshot, Clock::time_point at) {
  Sample s{at, {}};
  for (const auto& e : snapshot.ensembles) s.bytes[e.key] = e.bytes_by_class;
  samples_.push_back(std::move(s));
  // Samples older than kMaxSpan are never used again.
  while (!samples_.empty() && at - samples_.front().at > kMaxSpan) samples_.pop_front();
}

void ClassRates::fill(GatewaySnapshot& snapshot, Clock::time_point at) const {
  snapshot.rate_window_seconds = 0;
  const Sample* base = nullptr;
  for (const auto& s : samples_) {  // the oldest within kMaxSpan and at least kMinSpan old
    const auto age = at - s.at;
    if (age <= kMaxSpan && age >= kMinSpan) {
      base = &s;
      break;
    }
  }
  if (!base) return;
  const double seconds = std::chrono::duration<double>(at - base->at).count();
  snapshot.rate_window_seconds = seconds;
  for (auto& e : snapshot.ensembles) {
    const auto it = base->bytes.find(e.key);
    for (int c = 0; c < kContentClassCount; ++c) {
      const std::uint64_t before = it == base->bytes.end() ? 0 : it->second[c];
      // Counters never go back; if one did (a key reused), show no rate, not a huge one.
      const std::uint64_t now = e.bytes_by_class[c];
      e.bytes_per_second_by_class[c] = now >= before ? double(now - before) / seconds : 0.0;
    }
  }
}

}  // namespace egw::proxy
