#include "config/bit_rate.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace egw::config {

std::variant<std::uint64_t, std::string> parse_bit_rate(const std::string& text) {
  const std::string expected = "expected a rate in bits/s such as 950k, 19Mbit or 1.5G, got '" + text + "'";
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return expected;
  const std::string number = text.substr(0, i);
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return expected;
  std::string rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  double multiplier = 1;
  if (!rest.empty()) {
    switch (rest.front()) {
      case 'k': case 'K': multiplier = 1e3; rest.erase(0, 1); break;
      case 'm': case 'M': multiplier = 1e6; rest.erase(0, 1); break;
      case 'g': case 'G': multiplier = 1e9; rest.erase(0, 1); break;
      default: break;
    }
  }
  if (rest.find('B') != std::string::npos) return "rates are in bits/s, not bytes: '" + text + "'";
  if (!rest.empty() && rest != "bit" && rest != "bit/s" && rest != "bps" && rest != "b") return expected;
  const double bps = std::round(value * multiplier);
  if (bps < static_cast<double>(kMinBitRate) || bps > static_cast<double>(kMaxBitRate)) {
    return "rate '" + text + "' out of range (8k to 10000G bits/s)";
  }
  return static_cast<std::uint64_t>(bps);
}

}  // namespace egw::config
