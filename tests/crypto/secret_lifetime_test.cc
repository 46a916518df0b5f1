// Where secrets live and when they die (issue 19 item 9): the static private
// key is held once and shared by every copy of the config (a reload copies
// the config, not the key), and the Noise split's transport keys and every
// handshake's copy of the static key wipe themselves.
#include <gtest/gtest.h>

#include <new>
#include <type_traits>

#include "tunnel/crypto/keys.h"
#include "tunnel/crypto/noise_ik.h"
#include "tunnel/session/endpoint.h"

namespace egw::tunnel::crypto {
namespace {

TEST(SecretLifetime, TheTransportKeysAndTheHandshakesStaticKeyWipeThemselves) {
  static_assert(std::is_same_v<decltype(NoiseIk::TransportKeys::send), SecretKey32>);
  static_assert(std::is_same_v<decltype(NoiseIk::TransportKeys::receive), SecretKey32>);
  static_assert(std::is_same_v<decltype(NoiseIkConfig::local_static_private), SecretKey32>);
  static_assert(std::is_same_v<decltype(NoiseIkConfig::psk), std::optional<SecretKey32>>);
  // A SecretKey32's bytes are zero once it died.
  alignas(SecretKey32) unsigned char storage[sizeof(SecretKey32)];
  auto* key = new (storage) SecretKey32(Key32{1, 2, 3, 4, 5, 6, 7, 8, 9});
  key->~SecretKey32();
  for (const unsigned char b : storage) EXPECT_EQ(b, 0);
}

TEST(SecretLifetime, CopiesOfAConfigShareOneStaticKey) {
  session::EndpointConfig config;
  config.private_key = x25519_generate_private();
  const session::EndpointConfig reloaded = config;  // what a SIGHUP's config copy does
  EXPECT_EQ(reloaded.private_key.get().data(), config.private_key.get().data());
  EXPECT_TRUE(reloaded.private_key == config.private_key);
  session::PeerConfig peer;
  peer.public_key = x25519_public_key(x25519_generate_private());
  peer.preshared_key = x25519_generate_private();
  config.peers.push_back(peer);
  const session::EndpointConfig copy = config;
  EXPECT_EQ(copy.peers[0].preshared_key->get().data(), peer.preshared_key->get().data())
      << "a copied config shares the psk";
  const session::Endpoint endpoint(config, nullptr, Instant{});
  EXPECT_EQ(endpoint.identity().private_key.get().data(), config.private_key.get().data())
      << "the endpoint's identity holds the same key, not a copy";
  session::EndpointConfig other;
  other.private_key = x25519_generate_private();
  EXPECT_FALSE(other.private_key == config.private_key);
}

}  // namespace
}  // namespace egw::tunnel::crypto
