// libFuzzer target: arbitrary datagrams at a hub's Endpoint (the first thing
// a hostile sender reaches): the handshake parsers, mac1/mac2 checks, cookie
// replies, Noise message 1 and the data-packet demux. Also the parsers alone.
// Must never crash, leak or answer without a valid mac1; nothing may create
// a session or a receiver index.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tunnel/crypto/keys.h"
#include "tunnel/session/endpoint.h"

using namespace egw;
using namespace egw::tunnel::session;

namespace {

struct Fixture {
  Fixture() {
    EndpointConfig c;
    tunnel::crypto::Key32 key{};
    for (int i = 0; i < 32; ++i) key[i] = static_cast<std::uint8_t>(i + 1);
    c.private_key = key;
    PeerConfig peer;
    for (int i = 0; i < 32; ++i) peer.public_key[i] = static_cast<std::uint8_t>(9 * i + 1);
    c.peers.push_back(peer);
    c.under_load_initiations_per_second = 4;  // reach the cookie path too
    endpoint = std::make_unique<Endpoint>(c, nullptr, Instant{});
  }
  std::unique_ptr<Endpoint> endpoint;
  std::int64_t now_us = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture f;
  const std::span<const std::uint8_t> bytes(data, size);
  (void)parse_initiation(bytes);
  (void)parse_response(bytes);
  (void)parse_cookie_reply(bytes);
  std::vector<std::byte> datagram(reinterpret_cast<const std::byte*>(data),
                                  reinterpret_cast<const std::byte*>(data) + size);
  // Past mac1 (which random bytes never pass): for initiation- and
  // response-sized inputs whose 2nd byte is odd, write the valid mac1, so
  // the cookie path and Noise message 1 get fuzzed too.
  // Every transport-parameter version's sizes.
  const bool handshake_sized = size == kInitiationBytes || size == kResponseBytes ||
                               size == kInitiationBytesV2 || size == kResponseBytesV2 ||
                               size == kInitiationBytesV3 || size == kResponseBytesV3;
  if (handshake_sized && size > 1 && (data[1] & 1)) {
    const std::size_t mac1_at = size - 2 * kMacBytes;
    const Mac mac1 = truncated_mac(f.endpoint->identity().mac1_key,
                                   std::span(data, mac1_at));
    std::memcpy(datagram.data() + mac1_at, mac1.data(), kMacBytes);
  }
  f.now_us += 1000;
  const auto before = f.endpoint->stats();
  Session* s = f.endpoint->on_datagram(PeerAddress::v4(0x0a000001, 1234), datagram, Instant(us(f.now_us)));
  // Without our peer's private key no input can reach a session.
  if (s && f.endpoint->stats().initiations_processed == before.initiations_processed) std::abort();
  if (f.endpoint->session(0).is_up()) std::abort();
  std::array<std::byte, 2048> reply;
  while (f.endpoint->poll_reply(reply)) {
  }
  return 0;
}
