// The packet protection of a session: the AEAD keys of up to three
// handshakes at once, as WireGuard keeps them (whitepaper 6.1):
//
//   current   seals every packet we send, opens the peer's
//   previous  the keys current replaced: still opens the peer's packets that
//             were sealed before it switched (reordering), for ~3 PTO; at
//             the initiator, from the first packet the peer sealed with
//             current (until then the responder still seals with previous)
//   next      a responder's keys from a rekey handshake, not yet confirmed:
//             it opens with them, and the first datagram that opens with
//             them *and* is accepted by the connection promotes them to
//             current (only then do we seal with them: the initiator has
//             provably finished the handshake)
//
// A packet names its keys by the receiver index in its header (the index
// *we* chose for that handshake), so open() never tries keys in turn.
// Packet numbers run on across keys (the connection never restarts them), so
// the nonce is unique per key and the replay window spans rekeys.
//
// Keys live here and nowhere else: the Connection owns this object, so a
// connection's keys die with it; AeadKey wipes them on destruction.
// Every keypair of a connection uses the AEAD its handshake negotiated
// (ChaCha20-Poly1305 or AES-256-GCM; a rekey may change it). Failed opens
// are counted per key against its AEAD's integrity limit (RFC 9001 6.6:
// 2^36 forgeries for ChaCha20-Poly1305, 2^52 for AES-GCM), past which the
// session must end.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "common/units.h"
#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/packet_protection.h"

namespace egw::tunnel::session {

struct Keypair {
  Keypair(std::uint32_t local, std::uint32_t remote, const crypto::Key32& send_key,
          const crypto::Key32& receive_key, Instant created,
          crypto::Aead aead = crypto::Aead::chacha20_poly1305)
      : local_index(local), remote_index(remote), send(aead, send_key), receive(aead, receive_key),
        created_at(created) {}
  crypto::Aead aead() const { return send.aead(); }
  std::uint32_t local_index;   // in the headers the peer sends us
  std::uint32_t remote_index;  // in the headers we send
  crypto::AeadKey send;
  crypto::AeadKey receive;
  Instant created_at;
  std::uint64_t packets_sealed = 0;
  // Opened successfully: what the peer sealed under its half of this pair,
  // near enough (the initiator rekeys on either count: session.h).
  std::uint64_t packets_opened = 0;
  std::uint64_t forgeries = 0;  // failed opens with these keys
};

class SessionProtection final : public PacketProtection {
 public:
  std::size_t overhead() const override { return crypto::AeadKey::kTagBytes; }
  std::uint32_t remote_index() const override { return current_ ? current_->remote_index : 0; }
  void seal(PacketNumber number, std::span<const std::byte> header,
            std::span<std::byte> packet) override;
  void seal_gather(PacketNumber number, std::span<const std::byte> header,
                   std::span<std::byte> packet, std::span<const Source> sources) override;
  std::optional<std::span<std::byte>> open(PacketNumber number, std::span<const std::byte> header,
                                           std::span<std::byte> packet) override;

  // Confirmed keys (the initiator's, or a new connection's) become current;
  // unconfirmed ones (a responder's rekey) wait as next.
  void install(std::unique_ptr<Keypair> keys, bool confirmed);
  // An initiator's rekey while the peer never used current: the new keys
  // replace current, previous (the peer's keys in use) stays.
  void replace_current(std::unique_ptr<Keypair> keys) {
    last_opened_ = nullptr;
    current_ = std::move(keys);
  }
  void drop_previous() { previous_.reset(); }
  void drop_all();

  bool can_seal() const { return current_ != nullptr; }
  const Keypair* current() const { return current_.get(); }
  const Keypair* previous() const { return previous_.get(); }
  const Keypair* next() const { return next_.get(); }
  // The datagram last opened was accepted by the connection (replay check and
  // frames passed): if it was sealed with `next`, promote it. True if so.
  bool on_accepted();
  // The datagram last opened was sealed with current.
  bool opened_with_current() const { return last_opened_ && last_opened_ == current_.get(); }
  bool integrity_limit_reached() const { return integrity_limit_reached_; }

 private:
  Keypair* keys_for(std::uint32_t local_index);

  std::unique_ptr<Keypair> current_, previous_, next_;
  const Keypair* last_opened_ = nullptr;
  bool integrity_limit_reached_ = false;
};

}  // namespace egw::tunnel::session
