// The transport AEAD's cost per datagram: ns per in-place seal and open of
// a 1,400-byte packet (16 bytes of AD, the packet header) with AeadKey, as
// the data path calls it (one context per key, IV re-set per call), for
// ChaCha20-Poly1305 (the default) and AES-256-GCM (negotiated when both
// ends have AES instructions, tunnel/crypto/aead_offer.h). The open
// benchmarks verify a valid tag each time (a packet sealed once per nonce
// beforehand would cost the same; sealing anew is not counted).
//   taskset -c 1 build/bench/crypto --benchmark_min_time=1 --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/cpu_features.h"

namespace {

using egw::tunnel::crypto::Aead;
using egw::tunnel::crypto::AeadKey;
using egw::tunnel::crypto::Key32;

constexpr std::size_t kPacket = 1400;

Key32 bench_key() {
  Key32 key{};
  key[0] = 1;
  return key;
}

void seal(benchmark::State& state, Aead aead) {
  AeadKey key(aead, bench_key());
  std::vector<std::byte> packet(kPacket + AeadKey::kTagBytes);
  const std::byte ad[16] = {};
  std::uint64_t counter = 0;
  for (auto _ : state) {
    key.seal(counter++, ad, packet);
    benchmark::DoNotOptimize(packet.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kPacket));
  state.counters["aes_instructions"] = egw::tunnel::crypto::cpu_has_aes_gcm_instructions();
}

// Opens the same sealed packet again and again: opening in place would
// leave plaintext behind, so each round restores the sealed bytes first
// (a 1,416-byte memcpy, a few ns, counted).
void open(benchmark::State& state, Aead aead) {
  AeadKey sender(aead, bench_key());
  AeadKey receiver(aead, bench_key());
  std::vector<std::byte> sealed(kPacket + AeadKey::kTagBytes);
  const std::byte ad[16] = {};
  sender.seal(7, ad, sealed);
  std::vector<std::byte> packet(sealed.size());
  for (auto _ : state) {
    std::copy(sealed.begin(), sealed.end(), packet.begin());
    if (!receiver.open(7, ad, packet)) std::abort();
    benchmark::DoNotOptimize(packet.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kPacket));
}

void BM_ChaCha20Poly1305Seal(benchmark::State& state) { seal(state, Aead::chacha20_poly1305); }
void BM_ChaCha20Poly1305Open(benchmark::State& state) { open(state, Aead::chacha20_poly1305); }
void BM_Aes256GcmSeal(benchmark::State& state) { seal(state, Aead::aes_256_gcm); }
void BM_Aes256GcmOpen(benchmark::State& state) { open(state, Aead::aes_256_gcm); }
BENCHMARK(BM_ChaCha20Poly1305Seal);
BENCHMARK(BM_ChaCha20Poly1305Open);
BENCHMARK(BM_Aes256GcmSeal);
BENCHMARK(BM_Aes256GcmOpen);

}  // namespace

BENCHMARK_MAIN();
