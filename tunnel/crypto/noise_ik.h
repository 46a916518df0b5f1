// The secure tunnel's handshake: Noise IK exactly as published (Noise spec
// rev. 34 §7.5 "IK", §9 psk modifiers), in two variants
//
//   Noise_IK_25519_ChaChaPoly_SHA256       IK:      <- s
//                                                   ...
//                                                   -> e, es, s, ss
//                                                   <- e, ee, se
//   Noise_IKpsk2_25519_ChaChaPoly_SHA256   IKpsk2:  the same, and `psk` at the end
//                                                   of message 2 (as WireGuard does)
//
// Message 1: e (32) | encrypted s (32+16) | encrypted payload (n+16).
// Message 2: e (32) | encrypted payload (n+16).
// With a psk (§9.2), every `e` token also calls MixKey(e.public_key).
//
// Choosing the psk per peer: in IKpsk2 the psk token is the last token of
// message 2, so a responder reads message 1 first, learns the initiator's
// static key (remote_static()), looks the peer up, then calls set_psk() and
// writes message 2. The responder must however know that the handshake is
// IKpsk2 (not IK) before message 1, because the psk modifier changes how `e`
// is processed there: set NoiseIkConfig::use_psk. Deployments that mix peers
// with and without a psk should do as WireGuard does: always IKpsk2, with an
// all-zero psk for peers that have none.
//
// A rejected message (read_message -> nullopt) leaves the handshake state as
// it was: the handshake can still take a genuine message afterwards.
//
// Handshake only (it allocates); the transport path takes split()'s keys into
// ChaChaPolyKey (aead.h): counter = Noise nonce n, ad empty, as §5.1
// EncryptWithAd over the CipherStates Split() returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tunnel/crypto/keys.h"
#include "tunnel/crypto/symmetric_state.h"

namespace egw::tunnel::crypto {

struct NoiseIkConfig {
  bool initiator = true;
  SecretKey32 local_static_private;  // wiped with the config
  // Required for the initiator (IK's pre-message `<- s`). On a responder,
  // optional: when set, message 1 from any other static key is rejected.
  std::optional<Key32> remote_static_public;
  std::optional<SecretKey32> psk;  // set => Noise_IKpsk2_..., else Noise_IK_...
  std::vector<std::uint8_t> prologue;
  std::optional<Key32> fixed_ephemeral_private;  // test vectors only
  // Addition: Noise_IKpsk2 with the psk given later by set_psk() (the
  // responder choosing it by the initiator's static key). Implied by `psk`.
  bool use_psk = false;
};

class NoiseIk {
 public:
  // A configuration that cannot work (an initiator without
  // remote_static_public, or whose remote key is a low-order point) makes a
  // handshake whose write_message returns an empty vector.
  explicit NoiseIk(const NoiseIkConfig& config);

  // Message 1 (initiator writes, responder reads) and message 2 (responder
  // writes, initiator reads). write_message returns the message, or an empty
  // vector on misuse (wrong side or state, payload making the message longer
  // than Noise's 65535 bytes, IKpsk2 without a psk yet): a real message is
  // never empty. read_message returns the decrypted payload, or nullopt for a
  // bad length, a failed decryption, a low-order point, or the wrong state.
  std::vector<std::uint8_t> write_message(std::span<const std::uint8_t> payload);
  std::optional<std::vector<std::uint8_t>> read_message(std::span<const std::uint8_t> message);

  static constexpr std::size_t message1_bytes(std::size_t payload) { return 32 + 48 + payload + 16; }
  static constexpr std::size_t message2_bytes(std::size_t payload) { return 32 + payload + 16; }
  static constexpr std::size_t kMaxMessageBytes = 65535;  // Noise §3

  // The peer's static public key: configured on the initiator; on the
  // responder, set by a successful read of message 1 (the caller checks it
  // against its peers BEFORE writing message 2).
  const std::optional<Key32>& remote_static() const { return remote_static_; }

  // IKpsk2 only: sets the psk. Accepted (true) until the psk token is
  // processed: on the responder between read_message(message 1) and
  // write_message(message 2) (or earlier), on the initiator before it reads
  // message 2. False (and ignored) on an IK handshake or once too late.
  bool set_psk(const Key32& psk);

  bool is_psk() const { return psk_mode_; }
  bool is_initiator() const { return initiator_; }
  bool is_complete() const { return step_ == Step::kComplete; }

  // After the handshake (is_complete(); aborts otherwise — using keys of an
  // unfinished handshake is a bug): the transport keys from Split() as
  // (send, receive) for this side. Wipe them (SecretKey32) once loaded into
  // ChaChaPolyKey. (They wipe themselves.)
  struct TransportKeys {
    SecretKey32 send;
    SecretKey32 receive;
  };
  TransportKeys split() const;
  // The handshake hash h (§5.2 GetHandshakeHash; final once complete): a
  // channel binding both sides share.
  Key32 handshake_hash() const { return symmetric_.handshake_hash(); }

  // The protocol name this handshake runs (Noise_IK... or Noise_IKpsk2...).
  const char* protocol_name() const;

 private:
  enum class Step { kMessage1, kMessage2, kComplete, kFailed };

  std::vector<std::uint8_t> write_message1(std::span<const std::uint8_t> payload);
  std::vector<std::uint8_t> write_message2(std::span<const std::uint8_t> payload);
  std::optional<std::vector<std::uint8_t>> read_message1(std::span<const std::uint8_t> message);
  std::optional<std::vector<std::uint8_t>> read_message2(std::span<const std::uint8_t> message);
  // The `e` token (Noise 5.3, and 9.2 for psk modes): the writer makes (or
  // takes the fixed) ephemeral, appends its public key to `out` and mixes it
  // into `state`; the reader takes it from the front of `message`.
  void write_e(SymmetricState& state, std::vector<std::uint8_t>& out);
  Key32 read_e(SymmetricState& state, std::span<const std::uint8_t> message) const;

  bool initiator_;
  bool psk_mode_;
  Step step_ = Step::kMessage1;
  SecretKey32 static_private_;
  Key32 static_public_{};
  std::optional<Key32> remote_static_;
  std::optional<Key32> expected_remote_static_;  // responder's optional pin
  SecretKey32 ephemeral_private_;
  Key32 ephemeral_public_{};
  std::optional<Key32> fixed_ephemeral_private_;
  std::optional<Key32> remote_ephemeral_;
  std::optional<SecretKey32> psk_;
  SymmetricState symmetric_;
};

}  // namespace egw::tunnel::crypto
