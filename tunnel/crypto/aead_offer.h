// Which data-phase AEAD a session uses. The initiator lists the AEADs it
// supports in its order of preference (transport parameters version 3); the
// responder picks the first one it supports too and names it in its reply.
// An initiation without a list (an older build, or one that offers only
// ChaCha20-Poly1305) means ChaCha20-Poly1305, and gets a reply without one.
//
// The `cipher` setting decides a side's list:
//   automatic          AES-256-GCM first when this CPU has AES instructions
//                      (cpu_features.h), then ChaCha20-Poly1305; without
//                      them ChaCha20-Poly1305 only. Two such ends use AES-GCM
//                      exactly when both have the instructions: the
//                      initiator's list puts it first only if it has them,
//                      the responder accepts it only if it has them.
//   chacha20_poly1305  ChaCha20-Poly1305 only (what builds before version 3 do)
//   aes_256_gcm        AES-256-GCM only: a peer that cannot use it fails the
//                      handshake (the responder drops the initiation)
#pragma once

#include <array>
#include <initializer_list>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tunnel/crypto/aead.h"

namespace egw::tunnel::crypto {

enum class CipherSetting { automatic, chacha20_poly1305, aes_256_gcm };

// A preference-ordered list of AEADs, no repeats.
struct AeadList {
  static constexpr std::size_t kMax = 4;  // the wire's slots
  std::array<Aead, kMax> items{};
  std::size_t count = 0;

  AeadList() = default;
  AeadList(std::initializer_list<Aead> list) {
    for (Aead a : list) push(a);
  }
  void push(Aead a) {
    if (count < kMax && !contains(a)) items[count++] = a;
  }
  bool contains(Aead a) const {
    for (std::size_t i = 0; i < count; ++i) {
      if (items[i] == a) return true;
    }
    return false;
  }
  std::span<const Aead> span() const { return std::span(items).first(count); }
  // Only ChaCha20-Poly1305: what a side without the list means.
  bool is_chacha_only() const { return count == 1 && items[0] == Aead::chacha20_poly1305; }
  bool operator==(const AeadList& o) const {
    if (count != o.count) return false;
    for (std::size_t i = 0; i < count; ++i) {
      if (items[i] != o.items[i]) return false;
    }
    return true;
  }
  std::string to_string() const;  // "aes-256-gcm,chacha20-poly1305"
};

// The config's spelling: "auto", "chacha20-poly1305", "aes-256-gcm".
std::optional<CipherSetting> parse_cipher_setting(std::string_view text);
inline constexpr const char* kCipherSettingChoices = "auto, chacha20-poly1305 or aes-256-gcm";

// This side's list for a setting on a CPU with or without AES instructions.
AeadList aead_offer(CipherSetting setting, bool cpu_has_aes);

// The responder's choice: the first of `offered` that `supported` holds.
std::optional<Aead> choose_aead(const AeadList& offered, const AeadList& supported);

// The wire's slots (transport parameters version 3): ids in order, zero
// after the last. Decoding skips ids this build does not know (a newer
// peer's AEADs) and zeros.
std::array<std::uint8_t, AeadList::kMax> encode_aead_list(const AeadList& list);
AeadList decode_aead_list(std::span<const std::uint8_t, AeadList::kMax> slots);

}  // namespace egw::tunnel::crypto
