// Units shared by every layer. Cores never read a clock: callers pass `now`.
#pragma once

#include <chrono>
#include <cstdint>

namespace egw {

// Microsecond resolution is enough for WAN pacing (a 1500-byte packet at
// 10 Gbit/s takes 1.2 us) and keeps arithmetic in 64-bit integers.
using Duration = std::chrono::microseconds;

// A clock that has no now(): instants only come from whoever drives the core
// (the simulator's virtual time or the Asio driver's steady_clock).
struct CoreClock {
  using duration = Duration;
  using rep = Duration::rep;
  using period = Duration::period;
  using time_point = std::chrono::time_point<CoreClock, Duration>;
  static constexpr bool is_steady = true;
};
using Instant = CoreClock::time_point;

using ByteCount = std::uint64_t;
using PacketNumber = std::uint64_t;
using StreamId = std::uint64_t;

constexpr Duration ms(std::int64_t v) { return std::chrono::milliseconds(v); }
constexpr Duration us(std::int64_t v) { return Duration(v); }
constexpr Instant instant_at(Duration since_origin) { return Instant(since_origin); }

// Seconds as a double, for printing and for CUBIC's real-valued formula only.
constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace egw
