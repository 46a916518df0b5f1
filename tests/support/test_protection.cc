#include "tests/support/test_protection.h"

#include <algorithm>
#include <cstring>


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

SipHasher::SipHasher(std::uint64_t k0, std::uint64_t k1)
    : v0_(k0 ^ 0x736f6d6570736575ULL),
      v1_(k1 ^ 0x646f72616e646f6dULL),
      v2_(k0 ^ 0x6c7967656e657261ULL),
      v3_(k1 ^ 0x7465646279746573ULL) {}

void SipHasher::absorb(std::uint64_t word) {
  SipState s{v0_, v1_, v2_, v3_};
  s.absorb(word);
  v0_ = s.v0;
  v1_ = s.v1;
  v2_ = s.v2;
  v3_ = s.v3;
}

void SipHasher::update(std::span<const std::byte> bytes) {
  length_ += bytes.size();
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  if (tail_bytes_ > 0) {  // complete the pending word first
    const std::size_t take = std::min(n, 8 - tail_bytes_);
    std::memcpy(tail_.data() + tail_bytes_, p, take);
    tail_bytes_ += take;
    p += take;
    n -= take;
    if (tail_bytes_ < 8) return;
    absorb(load_le(tail_.data(), 8));
    tail_bytes_ = 0;
  }
  SipState s{v0_, v1_, v2_, v3_};  // the bulk in registers
  for (; n >= 8; p += 8, n -= 8) s.absorb(load_le(p, 8));
  v0_ = s.v0;
  v1_ = s.v1;
  v2_ = s.v2;
  v3_ = s.v3;
  if (n > 0) std::memcpy(tail_.data(), p, n);
  tail_bytes_ = n;
}

std::uint64_t SipHasher::finish() {
  // Last word: the leftover bytes, with the message length in the top byte.
  absorb(load_le(tail_.data(), tail_bytes_) | (length_ << 56));
  SipState s{v0_, v1_, v2_, v3_};
  s.v2 ^= 0xff;  // 4 finalisation rounds
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, std::span<const std::byte> message) {
  SipHasher h(k0, k1);
  h.update(message);
  return h.finish();
}

namespace {
std::array<std::byte, 8> big_endian(std::uint64_t value) {
  std::array<std::byte, 8> out{};
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(value >> (56 - 8 * i));
  return out;
}
}  // namespace

std::array<std::byte, TestProtection::kTagBytes> TestProtection::tag(
    PacketNumber number, std::span<const std::byte> header,
    std::span<const std::byte> plaintext) const {
  // Two independent-looking 64-bit keys from one shared key (arbitrary odd constants).
  SipHasher a(key_, key_ * 0x9e3779b97f4a7c15ULL);
  SipHasher b(~key_, key_ ^ 0xc2b2ae3d27d4eb4fULL);
  const auto number_bytes = big_endian(number);
  const auto header_length = big_endian(header.size());
  for (SipHasher* h : {&a, &b}) {
    h->update(number_bytes);
    h->update(header_length);
    h->update(header);
    h->update(plaintext);
  }
  const std::uint64_t first = a.finish();
  const std::uint64_t second = b.finish();
  std::array<std::byte, kTagBytes> out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<std::byte>((first >> (8 * i)) & 0xff);
    out[8 + i] = static_cast<std::byte>((second >> (8 * i)) & 0xff);
  }
  return out;
}

void TestProtection::seal(PacketNumber number, std::span<const std::byte> header,
                          std::span<std::byte> packet) {
  // A caller bug, not a network input: a packet without room for the tag.
  if (packet.size() < kTagBytes) return;
  const auto plaintext = packet.first(packet.size() - kTagBytes);
  const auto t = tag(number, header, plaintext);
  std::memcpy(packet.data() + plaintext.size(), t.data(), kTagBytes);
}

std::optional<std::span<std::byte>> TestProtection::open(PacketNumber number,
                                                         std::span<const std::byte> header,
                                                         std::span<std::byte> packet) {
  if (packet.size() < kTagBytes) return std::nullopt;
  const auto plaintext = packet.first(packet.size() - kTagBytes);
  const auto received = packet.last(kTagBytes);
  const auto expected = tag(number, header, plaintext);
  // Compare every byte (no early exit), as a real AEAD check would.
  std::byte difference{0};
  for (std::size_t i = 0; i < kTagBytes; ++i) difference |= received[i] ^ expected[i];
  if (difference != std::byte{0}) return std::nullopt;
  return plaintext;
}

}  // namespace egw::tunnel
