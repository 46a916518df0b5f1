// PLACEHOLDER until the classify branch lands (same API).
#pragma once
#include <string_view>
#include <vector>
#include "config/net_prefix.h"
namespace egw::proxy {
enum class Refusal { none, not_allowed, unspecified, loopback, link_local, multicast, own_address };
inline std::string_view to_string(Refusal r) { return r == Refusal::none ? "none" : "not_allowed"; }
class DestinationPolicy {
 public:
  DestinationPolicy(std::vector<config::DestinationRule> allow, std::vector<config::Ip16>) : allow_(std::move(allow)) {}
  Refusal check(const tunnel::Destination& d) const {
    for (const auto& r : allow_) if (r.matches(d)) return Refusal::none;
    return Refusal::not_allowed;
  }
 private:
  std::vector<config::DestinationRule> allow_;
};
inline std::vector<config::Ip16> local_interface_addresses() { return {}; }
}  // namespace egw::proxy
