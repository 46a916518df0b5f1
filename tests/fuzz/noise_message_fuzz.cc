// Fuzz target: arbitrary bytes as Noise IK(psk2) handshake messages and as a
// WireGuard key (tunnel/crypto/). Feeds the input as message 1 to a
// responder and as message 2 to an initiator that sent message 1 (fixed
// keys), for IK and IKpsk2, and to parse_wg_key. Passing means no crash, no
// sanitizer report, and: a rejected message leaves the handshake usable (the
// genuine message is still accepted afterwards), only genuine messages are
// accepted, and any key parse_wg_key accepts formats back to the same text.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "tunnel/crypto/noise_ik.h"
#include "tunnel/crypto/wg_key.h"

using namespace egw::tunnel::crypto;

namespace {

Key32 fill(std::uint8_t value) {
  Key32 key;
  key.fill(value);
  return key;
}

// Keys, the genuine messages, and the two handshakes ready to read them
// (copied per input: no scalar multiplication before the fuzzed read).
struct Fixture {
  NoiseIkConfig initiator_config;
  NoiseIkConfig responder_config;
  std::vector<std::uint8_t> message1;  // genuine, from the initiator
  std::vector<std::uint8_t> message2;  // genuine, answering message1
  std::optional<NoiseIk> responder;    // waiting for message 1
  std::optional<NoiseIk> initiator;    // sent message1, waiting for message 2

  explicit Fixture(bool psk) {
    initiator_config.initiator = true;
    initiator_config.local_static_private = fill(0x11);
    initiator_config.remote_static_public = x25519_public_key(fill(0x22));
    initiator_config.fixed_ephemeral_private = fill(0x33);
    initiator_config.prologue = {'f', 'u', 'z', 'z'};
    responder_config.initiator = false;
    responder_config.local_static_private = fill(0x22);
    responder_config.fixed_ephemeral_private = fill(0x44);
    responder_config.prologue = initiator_config.prologue;
    if (psk) initiator_config.psk = responder_config.psk = fill(0x55);
    responder.emplace(responder_config);
    initiator.emplace(initiator_config);
    message1 = initiator->write_message(std::vector<std::uint8_t>{1, 2, 3});
    NoiseIk r = *responder;
    if (!r.read_message(message1)) std::abort();
    message2 = r.write_message(std::vector<std::uint8_t>{4, 5});
    NoiseIk i = *initiator;
    if (!i.read_message(message2)) std::abort();
  }
};

void fuzz_handshake(const Fixture& f, std::span<const std::uint8_t> input, bool recheck) {
  const bool genuine1 = std::equal(input.begin(), input.end(), f.message1.begin(), f.message1.end());
  NoiseIk responder = *f.responder;
  if (responder.read_message(input).has_value() != genuine1) std::abort();
  // A rejected message leaves the state as it was (checked on some inputs:
  // it costs three scalar multiplications).
  if (recheck && !genuine1 && !responder.read_message(f.message1)) std::abort();

  const bool genuine2 = std::equal(input.begin(), input.end(), f.message2.begin(), f.message2.end());
  NoiseIk initiator = *f.initiator;
  if (initiator.read_message(input).has_value() != genuine2) std::abort();
  if (recheck && !genuine2 && !initiator.read_message(f.message2)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture ik(false);
  static const Fixture ikpsk2(true);
  const std::span<const std::uint8_t> input(data, size);
  unsigned sum = 0;
  for (const std::uint8_t b : input) sum += b;
  fuzz_handshake(size % 2 == 0 ? ik : ikpsk2, input, sum % 16 == 0);

  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto key = parse_wg_key(text)) {
    const std::string formatted = format_wg_key(*key);
    // Accepted text is the canonical form, maybe with whitespace around it.
    if (text.find(formatted) == std::string_view::npos) std::abort();
    if (parse_wg_key(formatted) != key) std::abort();
  }
  return 0;
}
