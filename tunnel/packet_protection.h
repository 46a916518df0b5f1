// Packet protection is an interface so the protocol core stays independent of
// cryptography: the real AEAD (Noise IK over OpenSSL) arrives with the secure
// tunnel; tests use TestProtection.
//
// Both directions work in place, in the datagram buffer itself (no copy, no
// allocation), the way AEAD APIs (EVP_AEAD_CTX_seal/open, ring's
// seal_in_place) and GSO batching want it. seal_gather() lets parts of the
// plaintext stay where they are (a stream's send ring): the AEAD encrypts
// them straight into the packet, which saves copying them in first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "common/units.h"
#include "tunnel/seal_source.h"

namespace egw::tunnel {

class PacketProtection {
 public:
  virtual ~PacketProtection() = default;
  // Bytes seal() adds to the plaintext (the AEAD tag).
  virtual std::size_t overhead() const = 0;
  // The receiver index to write into the header of the next sealed packet:
  // the peer's name for the keys seal() uses (WireGuard's receiver index),
  // so the peer finds them without trial decryption. open() reads the index
  // of a received packet from `header` to pick its keys. 0 without sessions.
  virtual std::uint32_t remote_index() const { return 0; }
  // Seals in place. `packet` holds the plaintext in its first
  // packet.size() - overhead() bytes; on return those bytes are the
  // ciphertext and the last overhead() bytes the tag. `header` is
  // authenticated but not encrypted; `number` is unique per key (the nonce).
  virtual void seal(PacketNumber number, std::span<const std::byte> header,
                    std::span<std::byte> packet) = 0;
  // Plaintext bytes [offset, offset + bytes.size()) that are not in the
  // packet yet but in `bytes` (ascending, non-overlapping).
  using Source = SealSource;
  // seal() of the plaintext `packet` holds once every source is in place; the
  // packet's bytes under the sources are overwritten, never read. Protections
  // whose AEAD can encrypt out of place override this; the default copies.
  virtual void seal_gather(PacketNumber number, std::span<const std::byte> header,
                           std::span<std::byte> packet, std::span<const Source> sources) {
    for (const Source& s : sources) {
      if (!s.bytes.empty()) std::memcpy(packet.data() + s.offset, s.bytes.data(), s.bytes.size());
    }
    seal(number, header, packet);
  }
  // Opens in place. `packet` is ciphertext followed by the tag; on success
  // the plaintext is returned as a prefix of `packet` (decrypted where it
  // lay), nullopt when the packet is forged or corrupt (its bytes may then
  // have been overwritten and must not be used).
  virtual std::optional<std::span<std::byte>> open(PacketNumber number,
                                                   std::span<const std::byte> header,
                                                   std::span<std::byte> packet) = 0;
};

}  // namespace egw::tunnel
