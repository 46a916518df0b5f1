#include "tunnel/session/session_keys.h"

namespace egw::tunnel::session {
namespace {

std::uint32_t header_receiver_index(std::span<const std::byte> header) {
  // docs/protocol.md section 2: type u8, then the receiver index big-endian.
  if (header.size() < 5) return 0;
  std::uint32_t v = 0;
  for (int i = 1; i <= 4; ++i) v = (v << 8) | std::to_integer<std::uint32_t>(header[i]);
  return v;
}

}  // namespace

void SessionProtection::seal(PacketNumber number, std::span<const std::byte> header,
                             std::span<std::byte> packet) {
  // The Connection seals only when can_seal() (Session gates poll_transmit).
  current_->send.seal(number, header, packet);
  ++current_->packets_sealed;
}

void SessionProtection::seal_gather(PacketNumber number, std::span<const std::byte> header,
                                    std::span<std::byte> packet, std::span<const Source> sources) {
  current_->send.seal_gather(number, header, packet, sources);
  ++current_->packets_sealed;
}

std::optional<std::span<std::byte>> SessionProtection::open(PacketNumber number,
                                                            std::span<const std::byte> header,
                                                            std::span<std::byte> packet) {
  last_opened_ = nullptr;
  Keypair* keys = keys_for(header_receiver_index(header));
  if (!keys) return std::nullopt;
  if (!keys->receive.open(number, header, packet)) {
    if (++keys->forgeries >= crypto::aead_integrity_limit(keys->aead())) integrity_limit_reached_ = true;
    return std::nullopt;
  }
  last_opened_ = keys;
  ++keys->packets_opened;
  return packet.first(packet.size() - overhead());
}

bool SessionProtection::on_accepted() {
  if (!next_ || last_opened_ != next_.get()) return false;
  // The initiator sealed with the new keys: it finished the handshake.
  previous_ = std::move(current_);
  current_ = std::move(next_);
  last_opened_ = nullptr;
  return true;
}

void SessionProtection::install(std::unique_ptr<Keypair> keys, bool confirmed) {
  last_opened_ = nullptr;
  if (confirmed) {
    previous_ = std::move(current_);
    current_ = std::move(keys);
    next_.reset();
  } else {
    next_ = std::move(keys);
  }
}

void SessionProtection::drop_all() {
  last_opened_ = nullptr;
  current_.reset();
  previous_.reset();
  next_.reset();
}

Keypair* SessionProtection::keys_for(std::uint32_t local_index) {
  for (Keypair* k : {current_.get(), next_.get(), previous_.get()}) {
    if (k && k->local_index == local_index) return k;
  }
  return nullptr;
}

}  // namespace egw::tunnel::session
