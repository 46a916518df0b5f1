#include "tunnel/crypto/noise_ik.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace egw::tunnel::crypto {
namespace {

constexpr const char* kIk = "Noise_IK_25519_ChaChaPoly_SHA256";
constexpr const char* kIkPsk2 = "Noise_IKpsk2_25519_ChaChaPoly_SHA256";

void append(std::vector<std::uint8_t>& out, Bytes bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// MixKey(DH(private, public)); false for a low-order point (all-zero output).
bool mix_dh(SymmetricState& state, const Key32& private_key, const Key32& public_key) {
  std::optional<Key32> shared = x25519(private_key, public_key);
  if (!shared) return false;
  state.mix_key(*shared);
  secure_wipe(shared->data(), shared->size());
  return true;
}

Key32 first32(std::span<const std::uint8_t> message) {
  Key32 key;
  std::copy_n(message.begin(), key.size(), key.begin());
  return key;
}

}  // namespace

NoiseIk::NoiseIk(const NoiseIkConfig& config)
    : initiator_(config.initiator),
      psk_mode_(config.psk.has_value() || config.use_psk),
      static_private_(config.local_static_private),
      static_public_(x25519_public_key(config.local_static_private.bytes)),
      fixed_ephemeral_private_(config.fixed_ephemeral_private),
      symmetric_(psk_mode_ ? kIkPsk2 : kIk) {
  if (config.psk) psk_.emplace(*config.psk);
  if (initiator_) {
    remote_static_ = config.remote_static_public;
  } else {
    expected_remote_static_ = config.remote_static_public;
  }
  // §5.3 Initialize(): MixHash(prologue), then the pre-message `<- s`: the
  // responder's static public key.
  symmetric_.mix_hash(config.prologue);
  if (initiator_) {
    if (!remote_static_) {
      step_ = Step::kFailed;
      return;
    }
    symmetric_.mix_hash(*remote_static_);
  } else {
    symmetric_.mix_hash(static_public_);
  }
}

const char* NoiseIk::protocol_name() const { return psk_mode_ ? kIkPsk2 : kIk; }

bool NoiseIk::set_psk(const Key32& psk) {
  if (!psk_mode_ || step_ == Step::kComplete || step_ == Step::kFailed) return false;
  psk_.emplace(psk);
  return true;
}

void NoiseIk::write_e(SymmetricState& state, std::vector<std::uint8_t>& out) {
  ephemeral_private_.bytes =
      fixed_ephemeral_private_ ? *fixed_ephemeral_private_ : x25519_generate_private();
  ephemeral_public_ = x25519_public_key(ephemeral_private_.bytes);
  append(out, ephemeral_public_);
  state.mix_hash(ephemeral_public_);
  if (psk_mode_) state.mix_key(ephemeral_public_);
}

Key32 NoiseIk::read_e(SymmetricState& state, std::span<const std::uint8_t> message) const {
  const Key32 remote_ephemeral = first32(message);
  state.mix_hash(remote_ephemeral);
  if (psk_mode_) state.mix_key(remote_ephemeral);
  return remote_ephemeral;
}

std::vector<std::uint8_t> NoiseIk::write_message(std::span<const std::uint8_t> payload) {
  if (step_ == Step::kMessage1 && initiator_) {
    if (message1_bytes(payload.size()) > kMaxMessageBytes) return {};
    return write_message1(payload);
  }
  if (step_ == Step::kMessage2 && !initiator_) {
    if (message2_bytes(payload.size()) > kMaxMessageBytes) return {};
    return write_message2(payload);
  }
  return {};
}

std::optional<std::vector<std::uint8_t>> NoiseIk::read_message(
    std::span<const std::uint8_t> message) {
  if (message.size() > kMaxMessageBytes) return std::nullopt;
  if (step_ == Step::kMessage1 && !initiator_) {
    if (message.size() < message1_bytes(0)) return std::nullopt;
    return read_message1(message);
  }
  if (step_ == Step::kMessage2 && initiator_) {
    if (message.size() < message2_bytes(0)) return std::nullopt;
    return read_message2(message);
  }
  return std::nullopt;
}

// -> e, es, s, ss
std::vector<std::uint8_t> NoiseIk::write_message1(std::span<const std::uint8_t> payload) {
  SymmetricState state = symmetric_;
  std::vector<std::uint8_t> out;
  out.reserve(message1_bytes(payload.size()));
  write_e(state, out);  // e
  if (!mix_dh(state, ephemeral_private_.bytes, *remote_static_)) {  // es
    step_ = Step::kFailed;  // our configured peer key is a low-order point
    return {};
  }
  const auto encrypted_static = state.encrypt_and_hash(static_public_);  // s
  if (!encrypted_static) return {};
  append(out, *encrypted_static);
  if (!mix_dh(state, static_private_.bytes, *remote_static_)) return {};  // ss
  const auto encrypted_payload = state.encrypt_and_hash(payload);
  if (!encrypted_payload) return {};
  append(out, *encrypted_payload);
  symmetric_ = state;
  step_ = Step::kMessage2;
  return out;
}

std::optional<std::vector<std::uint8_t>> NoiseIk::read_message1(
    std::span<const std::uint8_t> message) {
  SymmetricState state = symmetric_;
  const Key32 remote_ephemeral = read_e(state, message);  // e
  if (!mix_dh(state, static_private_.bytes, remote_ephemeral)) return std::nullopt;  // es
  const auto remote_static = state.decrypt_and_hash(message.subspan(32, 48));    // s
  if (!remote_static) return std::nullopt;
  const Key32 remote_static_key = first32(*remote_static);
  if (!mix_dh(state, static_private_.bytes, remote_static_key)) return std::nullopt;  // ss
  auto payload = state.decrypt_and_hash(message.subspan(80));
  if (!payload) return std::nullopt;
  if (expected_remote_static_ && *expected_remote_static_ != remote_static_key) return std::nullopt;
  symmetric_ = state;
  remote_ephemeral_ = remote_ephemeral;
  remote_static_ = remote_static_key;
  step_ = Step::kMessage2;
  return payload;
}

// <- e, ee, se [, psk]
std::vector<std::uint8_t> NoiseIk::write_message2(std::span<const std::uint8_t> payload) {
  if (psk_mode_ && !psk_) return {};  // set_psk() first
  SymmetricState state = symmetric_;
  std::vector<std::uint8_t> out;
  out.reserve(message2_bytes(payload.size()));
  write_e(state, out);  // e
  if (!mix_dh(state, ephemeral_private_.bytes, *remote_ephemeral_)) return {};  // ee
  if (!mix_dh(state, ephemeral_private_.bytes, *remote_static_)) return {};     // se
  if (psk_mode_) state.mix_key_and_hash(psk_->bytes);                           // psk
  const auto encrypted_payload = state.encrypt_and_hash(payload);
  if (!encrypted_payload) return {};
  append(out, *encrypted_payload);
  symmetric_ = state;
  step_ = Step::kComplete;
  ephemeral_private_.wipe();
  return out;
}

std::optional<std::vector<std::uint8_t>> NoiseIk::read_message2(
    std::span<const std::uint8_t> message) {
  if (psk_mode_ && !psk_) return std::nullopt;
  SymmetricState state = symmetric_;
  const Key32 remote_ephemeral = read_e(state, message);  // e
  if (!mix_dh(state, ephemeral_private_.bytes, remote_ephemeral)) return std::nullopt;  // ee
  if (!mix_dh(state, static_private_.bytes, remote_ephemeral)) return std::nullopt;     // se
  if (psk_mode_) state.mix_key_and_hash(psk_->bytes);                                  // psk
  auto payload = state.decrypt_and_hash(message.subspan(32));
  if (!payload) return std::nullopt;
  symmetric_ = state;
  remote_ephemeral_ = remote_ephemeral;
  step_ = Step::kComplete;
  ephemeral_private_.wipe();
  return payload;
}

NoiseIk::TransportKeys NoiseIk::split() const {
  if (step_ != Step::kComplete) {
    std::fprintf(stderr, "egw crypto: NoiseIk::split() before the handshake completed\n");
    std::abort();
  }
  const auto [initiator_to_responder, responder_to_initiator] = symmetric_.split();
  if (initiator_) return {initiator_to_responder, responder_to_initiator};
  return {responder_to_initiator, initiator_to_responder};
}

}  // namespace egw::tunnel::crypto
