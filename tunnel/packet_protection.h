// Packet protection is an interface so the protocol core stays independent of
// cryptography: the real AEAD (Noise IK over OpenSSL) arrives with the secure
// tunnel; tests use TestProtection.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "common/units.h"

namespace egw::tunnel {

class PacketProtection {
 public:
  virtual ~PacketProtection() = default;
  // Bytes seal() adds to the plaintext (the AEAD tag).
  virtual std::size_t overhead() const = 0;
  // Appends the protected form of `plaintext` to `out`. `header` is
  // authenticated but not encrypted; `number` is unique per key (the nonce).
  virtual void seal(PacketNumber number, std::span<const std::byte> header,
                    std::span<const std::byte> plaintext, std::vector<std::byte>& out) = 0;
  // The plaintext, or nullopt when the packet is forged or corrupt.
  virtual std::optional<std::vector<std::byte>> open(PacketNumber number,
                                                     std::span<const std::byte> header,
                                                     std::span<const std::byte> ciphertext) = 0;
};

}  // namespace egw::tunnel
