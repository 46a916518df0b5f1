// Cookies: WireGuard's defence against handshake floods (whitepaper 5.4.7),
// with our Noise suite's primitives.
//
// A responder under load (more initiations per second than it wants to pay
// four X25519 operations for) does no Diffie-Hellman for an initiation
// without a valid mac2. It answers it instead with a cookie reply: a 16-byte
// cookie = MAC(secret, sender's address), the secret random and replaced
// every 2 minutes. The cookie travels encrypted so only the initiator (who
// knows the responder's public key and its own mac1) can read it; its next
// initiation carries mac2 = MAC(cookie, message), which proves it receives
// datagrams at that address. No state is created for anyone: the responder
// keeps one secret, the reply is computed and forgotten.
//
// Cookie reply encryption: WireGuard uses XChaCha20-Poly1305 for its random
// 24-byte nonce. OpenSSL has no XChaCha, so each reply derives its own key,
//   key = HMAC-SHA256(SHA256("cookie--" || responder static public), nonce16)
// and seals the cookie with ChaCha20-Poly1305 at counter 0, the initiation's
// mac1 as associated data (it binds the reply to one initiation).
//
// Senders that hold a valid cookie are then rate-limited per IP address (20
// initiations per second, burst 5, as WireGuard's ratelimiter.go), an IPv6
// sender by its /64: source ports and the addresses of one /64 cost nothing,
// so keying by address and port let one host with 4,400 ports get 4,400
// buckets (issue 19). The table is bounded to kMaxLimitedAddresses entries.
//
// On top, under load, every Diffie-Hellman that an initiation costs draws
// from one global budget (`handshakes_per_second`, burst of one second):
// beyond it initiations are dropped and counted, so many hosts together
// cannot make the responder do unbounded work either. The Endpoint exempts
// initiations from the address a configured peer currently uses (its live
// session keeps rekeying), as WireGuard's under-load queue favours nobody
// but bounds the work.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/units.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/session/handshake_messages.h"
#include "tunnel/session/peer_address.h"

namespace egw::tunnel::session {

using Cookie = std::array<std::uint8_t, 16>;

// Responder side.
class CookieChecker {
 public:
  static constexpr Duration kSecretLifetime = ms(120'000);
  static constexpr Duration kLoadWindow = ms(1'000);
  static constexpr std::size_t kMaxLimitedAddresses = 4096;
  static constexpr double kInitiationsPerSecondPerAddress = 20;
  static constexpr double kBurstPerAddress = 5;

  // `under_load_per_second`: initiations per second beyond which mac2 is
  // required; `handshakes_per_second`: the global budget under load.
  CookieChecker(const crypto::Key32& our_static_public, std::uint32_t under_load_per_second,
                std::uint32_t handshakes_per_second, Instant now);

  // Counts one initiation that passed mac1 and says whether the responder is
  // under load (then it needs a valid mac2 before doing any DH).
  bool note_initiation_and_check_load(Instant now);
  bool mac2_valid(const InitiationView& message, const PeerAddress& from, Instant now);
  // The cookie reply to an initiation from `from` without a valid mac2.
  std::array<std::uint8_t, kCookieReplyBytes> make_reply(const InitiationView& message,
                                                         const PeerAddress& from, Instant now);
  // Per-IP (IPv6: per /64) rate limit for senders with a valid cookie; false = drop.
  bool allow(const PeerAddress& from, Instant now);
  // Takes one handshake from the global budget; false = over budget, drop.
  bool take_budget(Instant now);

  // The rate limiter's key: the IP address, an IPv6 one cut to its /64.
  static std::array<std::uint8_t, 16> limiter_key(const PeerAddress& from);

 private:
  Cookie cookie_for(const PeerAddress& from, Instant now);

  crypto::Key32 cookie_reply_key_;  // SHA256("cookie--" || our static public)
  std::uint32_t under_load_per_second_;
  crypto::Key32 secret_{};
  Instant secret_born_{};
  Instant window_start_{};
  std::uint32_t in_window_ = 0;
  Instant under_load_until_{};
  struct Bucket { double tokens; Instant at; };
  struct KeyHash {
    std::size_t operator()(const std::array<std::uint8_t, 16>& k) const {
      return PeerAddressHash{}(PeerAddress{k, 0});
    }
  };
  std::unordered_map<std::array<std::uint8_t, 16>, Bucket, KeyHash> buckets_;
  double budget_per_second_;
  Bucket budget_;
};

// Initiator side: the cookie a responder gave us, valid for 2 minutes.
class CookieJar {
 public:
  explicit CookieJar(const crypto::Key32& responder_static_public);
  // Decrypts a reply to the initiation whose mac1 was `sent_mac1`; false if forged.
  bool on_reply(const CookieReplyView& reply, const Mac& sent_mac1, Instant now);
  // The cookie for mac2, or an empty span when none is fresh.
  std::span<const std::uint8_t> cookie(Instant now) const;

 private:
  crypto::Key32 cookie_reply_key_;
  std::optional<Cookie> cookie_;
  Instant received_at_{};
};

}  // namespace egw::tunnel::session
