// Link rates in the config ("19Mbit", "950k", "1.5G", 20000000): bits per
// second, SI multipliers (k = 1000), the way shapers (tc, cake) write them.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace egw::config {

// Bounds of a configured rate: 8 kbit/s (one 1,000-byte datagram per
// second) to 10 Tbit/s.
inline constexpr std::uint64_t kMinBitRate = 8'000;
inline constexpr std::uint64_t kMaxBitRate = 10'000'000'000'000ull;

// A number (decimals allowed), then an optional multiplier k, M or G (any
// case), then an optional unit: bit, bit/s, bps. Bytes are refused ("B",
// "MB/s": rates are bits). Returns bits per second or what is wrong.
std::variant<std::uint64_t, std::string> parse_bit_rate(const std::string& text);

}  // namespace egw::config
