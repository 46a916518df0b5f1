// TestProtection: a PacketProtection for unit tests and the simulator.
//
// NOT SECURITY. The payload travels in plaintext and the 16-byte tag is two
// SipHash-2-4 values under keys derived from one 64-bit shared key, which
// both peers know. What it gives tests is the *behaviour* of an AEAD: any
// corrupted, truncated or forged datagram (or one sealed under another key,
// packet number or header) fails open(), so the connection's drop-and-count
// paths are exercised. The real AEAD arrives with the secure tunnel.
//
// tag = SipHash-2-4(k_a, m) || SipHash-2-4(k_b, m), both little-endian, where
// m = packet number (8 bytes BE) || header length (8 bytes BE) || header || plaintext
// (the length keeps the header/plaintext boundary unambiguous).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tunnel/packet_protection.h"

namespace egw::tunnel {

// SipHash-2-4 (Aumasson & Bernstein, 2012) with key (k0, k1) as the
// reference implementation reads a 16-byte key: two little-endian words.
std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, std::span<const std::byte> message);

class TestProtection final : public PacketProtection {
 public:
  static constexpr std::size_t kTagBytes = 16;

  explicit TestProtection(std::uint64_t shared_key) : key_(shared_key) {}

  std::size_t overhead() const override { return kTagBytes; }
  void seal(PacketNumber number, std::span<const std::byte> header,
            std::span<const std::byte> plaintext, std::vector<std::byte>& out) override;
  std::optional<std::vector<std::byte>> open(PacketNumber number,
                                             std::span<const std::byte> header,
                                             std::span<const std::byte> ciphertext) override;

 private:
  std::array<std::byte, kTagBytes> tag(PacketNumber number, std::span<const std::byte> header,
                                       std::span<const std::byte> plaintext) const;

  std::uint64_t key_;
};

}  // namespace egw::tunnel
