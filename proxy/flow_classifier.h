// The class of a UDP flow the branch carries (udp.ports, and QUIC with
// udp.carry_quic), decided once, on the flow's first datagram, by the
// stream classifier's stages (proxy/classifier.h):
//
//   admin destination rule > a QUIC Initial's SNI through the host-name
//   stages (admin pattern > nDPI > name tokens) > nDPI by destination
//   address > learned cache > a QUIC name nothing knew: unknown_host >
//   udp.class (the admin's class for the selected ports)
//
// Only the first datagram is read: a flow opens at once (a call must not
// wait for a second packet). A ClientHello split over two Initials falls to
// the address stages: Chromium's always is (its post-quantum key share; none
// of the corpus' 63 is named by its first datagram), so carried QUIC from
// Chromium is classified by address until the flow can wait for a second
// Initial (known limit). Costs one QUIC Initial decryption (~2-4 us)
// per flow to port 443 and nothing per later datagram.
#pragma once

#include <cstddef>
#include <span>

#include "common/content_class.h"
#include "proxy/classifier.h"
#include "tunnel/frames.h"

namespace egw::proxy {

Classifier::Decision classify_udp_flow(const Classifier& classifier, const tunnel::Destination& destination,
                                       std::span<const std::byte> first_datagram, ContentClass configured);

}  // namespace egw::proxy
