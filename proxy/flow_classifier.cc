#include "proxy/flow_classifier.h"

#include <optional>
#include <string_view>

#include "proxy/quic_initial.h"

namespace egw::proxy {

namespace {
constexpr std::uint16_t kQuicPort = 443;
}  // namespace

Classifier::Decision classify_udp_flow(const Classifier& classifier, const tunnel::Destination& destination,
                                       std::span<const std::byte> first_datagram, ContentClass configured) {
  QuicInitialReader quic;
  std::optional<std::string_view> host;
  if (destination.port == kQuicPort && quic.add_datagram(first_datagram).status == QuicStatus::found) {
    host = quic.result().host;
  }
  Classifier::Decision d = classifier.classify_named(destination, host);
  if (d.stage == Stage::fallback) d.cls = configured;  // the admin selected these ports for this class
  d.need_more = false;
  return d;
}

}  // namespace egw::proxy
