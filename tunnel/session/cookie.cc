#include "tunnel/session/cookie.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstring>

#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/hash.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel::session {
namespace {

crypto::Key32 cookie_reply_key(const crypto::Key32& responder_static_public) {
  std::array<std::uint8_t, 8 + 32> input{};
  std::memcpy(input.data(), "cookie--", 8);
  std::memcpy(input.data() + 8, responder_static_public.data(), 32);
  return crypto::sha256(input);
}

crypto::Key32 per_reply_key(const crypto::Key32& base, std::span<const std::uint8_t> nonce) {
  return crypto::hmac_sha256(base, nonce);
}

void random_bytes(std::span<std::uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) std::abort();
}

}  // namespace

CookieChecker::CookieChecker(const crypto::Key32& our_static_public,
                             std::uint32_t under_load_per_second,
                             std::uint32_t handshakes_per_second, Instant now)
    : cookie_reply_key_(cookie_reply_key(our_static_public)),
      under_load_per_second_(under_load_per_second),
      budget_per_second_(handshakes_per_second),
      budget_{budget_per_second_, now} {
  random_bytes(secret_);
  secret_born_ = now;
  window_start_ = now;
}

bool CookieChecker::note_initiation_and_check_load(Instant now) {
  if (now - window_start_ >= kLoadWindow) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (++in_window_ > under_load_per_second_) under_load_until_ = now + kLoadWindow;
  return now < under_load_until_;
}

Cookie CookieChecker::cookie_for(const PeerAddress& from, Instant now) {
  if (now - secret_born_ >= kSecretLifetime) {
    random_bytes(secret_);
    secret_born_ = now;
  }
  return truncated_mac(secret_, from.bytes());
}

bool CookieChecker::mac2_valid(const InitiationView& message, const PeerAddress& from,
                               Instant now) {
  const Cookie cookie = cookie_for(from, now);
  return mac_equal(message.mac2, truncated_mac(cookie, message.covered_by_mac2));
}

std::array<std::uint8_t, kCookieReplyBytes> CookieChecker::make_reply(const InitiationView& message,
                                                                      const PeerAddress& from,
                                                                      Instant now) {
  std::array<std::uint8_t, kCookieReplyBytes> out{};
  out[0] = static_cast<std::uint8_t>(PacketType::cookie_reply);
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<std::uint8_t>(message.sender_index >> (24 - 8 * i));
  auto nonce = std::span(out).subspan(5, kCookieNonceBytes);
  random_bytes(nonce);
  const Cookie cookie = cookie_for(from, now);
  auto sealed = std::span(out).subspan(5 + kCookieNonceBytes);
  std::memcpy(sealed.data(), cookie.data(), cookie.size());
  crypto::ChaChaPolyKey key(per_reply_key(cookie_reply_key_, nonce));
  key.seal(0, std::as_bytes(message.mac1), std::as_writable_bytes(sealed));
  return out;
}

std::array<std::uint8_t, 16> CookieChecker::limiter_key(const PeerAddress& from) {
  std::array<std::uint8_t, 16> key = from.ip;
  if (!from.is_v4()) std::fill(key.begin() + 8, key.end(), 0);  // the /64
  return key;
}

bool CookieChecker::take_budget(Instant now) {
  budget_.tokens = std::min(budget_per_second_,
                            budget_.tokens + to_seconds(now - budget_.at) * budget_per_second_);
  budget_.at = now;
  if (budget_.tokens < 1) return false;
  budget_.tokens -= 1;
  return true;
}

bool CookieChecker::allow(const PeerAddress& from, Instant now) {
  const auto key = limiter_key(from);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxLimitedAddresses) {
      // Forget addresses whose bucket has refilled (they lose nothing).
      std::erase_if(buckets_, [&](const auto& e) { return now - e.second.at >= kLoadWindow; });
      if (buckets_.size() >= kMaxLimitedAddresses) return false;
    }
    it = buckets_.emplace(key, Bucket{kBurstPerAddress, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::min(kBurstPerAddress,
                      b.tokens + to_seconds(now - b.at) * kInitiationsPerSecondPerAddress);
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

CookieJar::CookieJar(const crypto::Key32& responder_static_public)
    : cookie_reply_key_(cookie_reply_key(responder_static_public)) {}

bool CookieJar::on_reply(const CookieReplyView& reply, const Mac& sent_mac1, Instant now) {
  std::array<std::uint8_t, 32> sealed{};
  std::memcpy(sealed.data(), reply.sealed_cookie.data(), sealed.size());
  crypto::ChaChaPolyKey key(per_reply_key(cookie_reply_key_, reply.nonce));
  if (!key.open(0, std::as_bytes(std::span(sent_mac1)), std::as_writable_bytes(std::span(sealed)))) {
    return false;
  }
  Cookie cookie{};
  std::memcpy(cookie.data(), sealed.data(), cookie.size());
  cookie_ = cookie;
  received_at_ = now;
  return true;
}

std::span<const std::uint8_t> CookieJar::cookie(Instant now) const {
  // Valid for the responder's secret lifetime, less a margin for the trip.
  if (!cookie_ || now - received_at_ >= CookieChecker::kSecretLifetime - ms(10'000)) return {};
  return *cookie_;
}

}  // namespace egw::tunnel::session
