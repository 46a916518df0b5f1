#include "tests/support/test_protection.h"

#include <cstring>

#include "tunnel/wire_writer.h"

namespace egw::tunnel {
namespace {

// Every simulated datagram is sealed and opened here, so the hash must stay
// cheap in -O0 sanitizer builds too: always_inline helpers and one memcpy per
// word instead of std::rotl calls and per-byte span accesses.
[[gnu::always_inline]] inline std::uint64_t rotl(std::uint64_t x, int bits) {
  return (x << bits) | (x >> (64 - bits));
}

struct SipState {
  std::uint64_t v0, v1, v2, v3;
  [[gnu::always_inline]] inline void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  [[gnu::always_inline]] inline void absorb(std::uint64_t m) {  // 2 compression rounds
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

// Up to 8 bytes at `p` as a little-endian word (any host byte order).
[[gnu::always_inline]] inline std::uint64_t load_le(const std::byte* p, std::size_t n) {
  unsigned char b[8] = {};
  if (n > 0) std::memcpy(b, p, n);  // p may be null for an empty message
  return std::uint64_t{b[0]} | std::uint64_t{b[1]} << 8 | std::uint64_t{b[2]} << 16 |
         std::uint64_t{b[3]} << 24 | std::uint64_t{b[4]} << 32 | std::uint64_t{b[5]} << 40 |
         std::uint64_t{b[6]} << 48 | std::uint64_t{b[7]} << 56;
}

}  // namespace

std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, std::span<const std::byte> message) {
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
             k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
  const std::byte* p = message.data();
  const std::size_t full_words = message.size() / 8;
  for (std::size_t i = 0; i < full_words; ++i) s.absorb(load_le(p + 8 * i, 8));
  // Last word: the leftover bytes, with the message length in the top byte.
  s.absorb(load_le(p + 8 * full_words, message.size() % 8) |
           (static_cast<std::uint64_t>(message.size()) << 56));
  s.v2 ^= 0xff;  // 4 finalisation rounds
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::array<std::byte, TestProtection::kTagBytes> TestProtection::tag(
    PacketNumber number, std::span<const std::byte> header,
    std::span<const std::byte> plaintext) const {
  std::vector<std::byte> message;
  message.reserve(16 + header.size() + plaintext.size());
  WireWriter w(message);
  w.write_u64(number);
  w.write_u64(header.size());
  w.write_bytes(header);
  w.write_bytes(plaintext);
  // Two independent-looking 64-bit keys from one shared key (arbitrary odd constants).
  const std::uint64_t first = siphash24(key_, key_ * 0x9e3779b97f4a7c15ULL, message);
  const std::uint64_t second = siphash24(~key_, key_ ^ 0xc2b2ae3d27d4eb4fULL, message);
  std::array<std::byte, kTagBytes> out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<std::byte>((first >> (8 * i)) & 0xff);
    out[8 + i] = static_cast<std::byte>((second >> (8 * i)) & 0xff);
  }
  return out;
}

void TestProtection::seal(PacketNumber number, std::span<const std::byte> header,
                          std::span<const std::byte> plaintext, std::vector<std::byte>& out) {
  const auto t = tag(number, header, plaintext);
  out.insert(out.end(), plaintext.begin(), plaintext.end());
  out.insert(out.end(), t.begin(), t.end());
}

std::optional<std::vector<std::byte>> TestProtection::open(
    PacketNumber number, std::span<const std::byte> header,
    std::span<const std::byte> ciphertext) {
  if (ciphertext.size() < kTagBytes) return std::nullopt;
  const auto plaintext = ciphertext.first(ciphertext.size() - kTagBytes);
  const auto received = ciphertext.last(kTagBytes);
  const auto expected = tag(number, header, plaintext);
  // Compare every byte (no early exit), as a real AEAD check would.
  std::byte difference{0};
  for (std::size_t i = 0; i < kTagBytes; ++i) difference |= received[i] ^ expected[i];
  if (difference != std::byte{0}) return std::nullopt;
  return std::vector<std::byte>(plaintext.begin(), plaintext.end());
}

}  // namespace egw::tunnel
