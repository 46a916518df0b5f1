// TestProtection: a PacketProtection for unit tests and the simulator.
//
// NOT SECURITY. The payload travels in plaintext and the 16-byte tag is two
// SipHash-2-4 values under keys derived from one 64-bit shared key, which
// both peers know. What it gives tests is the *behaviour* of an AEAD: any
// corrupted, truncated or forged datagram (or one sealed under another key,
// packet number or header) fails open(), so the connection's drop-and-count
// paths are exercised. The real AEAD arrives with the secure tunnel. Like
// the interface asks, seal and open work in place and allocate nothing.
//
// tag = SipHash-2-4(k_a, m) || SipHash-2-4(k_b, m), both little-endian, where
// m = packet number (8 bytes BE) || header length (8 bytes BE) || header || plaintext
// (the length keeps the header/plaintext boundary unambiguous).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "tunnel/packet_protection.h"

namespace egw::tunnel {

// SipHash-2-4 (Aumasson & Bernstein, 2012) with key (k0, k1) as the
// reference implementation reads a 16-byte key: two little-endian words.
std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, std::span<const std::byte> message);

// The same function over a message given in pieces (no copy to join them).
class SipHasher {
 public:
  SipHasher(std::uint64_t k0, std::uint64_t k1);
  void update(std::span<const std::byte> bytes);
  std::uint64_t finish();

 private:
  void absorb(std::uint64_t word);

  std::uint64_t v0_, v1_, v2_, v3_;
  std::array<std::byte, 8> tail_{};  // bytes of the word being filled
  std::size_t tail_bytes_ = 0;
  std::uint64_t length_ = 0;
};

class TestProtection final : public PacketProtection {
 public:
  static constexpr std::size_t kTagBytes = 16;

  explicit TestProtection(std::uint64_t shared_key) : key_(shared_key) {}

  std::size_t overhead() const override { return kTagBytes; }
  void seal(PacketNumber number, std::span<const std::byte> header,
            std::span<std::byte> packet) override;
  std::optional<std::span<std::byte>> open(PacketNumber number,
                                           std::span<const std::byte> header,
                                           std::span<std::byte> packet) override;

 private:
  std::array<std::byte, kTagBytes> tag(PacketNumber number, std::span<const std::byte> header,
                                       std::span<const std::byte> plaintext) const;

  std::uint64_t key_;
};

// A protection that adds nothing and checks nothing: for measuring the
// packet path's own cost (and never for anything that must reject forgeries).
class NullProtection final : public PacketProtection {
 public:
  std::size_t overhead() const override { return 0; }
  void seal(PacketNumber, std::span<const std::byte>, std::span<std::byte>) override {}
  std::optional<std::span<std::byte>> open(PacketNumber, std::span<const std::byte>,
                                           std::span<std::byte> packet) override {
    return packet;
  }
};

}  // namespace egw::tunnel
