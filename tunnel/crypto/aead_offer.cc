#include "tunnel/crypto/aead_offer.h"

namespace egw::tunnel::crypto {

std::string AeadList::to_string() const {
  std::string out;
  for (Aead a : span()) {
    if (!out.empty()) out += ',';
    out += aead_name(a);
  }
  return out;
}

std::optional<CipherSetting> parse_cipher_setting(std::string_view text) {
  if (text == "auto") return CipherSetting::automatic;
  if (text == "chacha20-poly1305") return CipherSetting::chacha20_poly1305;
  if (text == "aes-256-gcm") return CipherSetting::aes_256_gcm;
  return std::nullopt;
}

AeadList aead_offer(CipherSetting setting, bool cpu_has_aes) {
  switch (setting) {
    case CipherSetting::chacha20_poly1305: return {Aead::chacha20_poly1305};
    case CipherSetting::aes_256_gcm: return {Aead::aes_256_gcm};
    case CipherSetting::automatic: break;
  }
  if (cpu_has_aes) return {Aead::aes_256_gcm, Aead::chacha20_poly1305};
  return {Aead::chacha20_poly1305};
}

std::optional<Aead> choose_aead(const AeadList& offered, const AeadList& supported) {
  for (Aead a : offered.span()) {
    if (supported.contains(a)) return a;
  }
  return std::nullopt;
}

std::array<std::uint8_t, AeadList::kMax> encode_aead_list(const AeadList& list) {
  std::array<std::uint8_t, AeadList::kMax> out{};
  for (std::size_t i = 0; i < list.count; ++i) out[i] = static_cast<std::uint8_t>(list.items[i]);
  return out;
}

AeadList decode_aead_list(std::span<const std::uint8_t, AeadList::kMax> slots) {
  AeadList list;
  for (const std::uint8_t id : slots) {
    if (id == static_cast<std::uint8_t>(Aead::chacha20_poly1305) ||
        id == static_cast<std::uint8_t>(Aead::aes_256_gcm)) {
      list.push(static_cast<Aead>(id));
    }
  }
  return list;
}

}  // namespace egw::tunnel::crypto
