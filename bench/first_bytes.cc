// The classifier's parse cost per new connection (issue 21: < 5 µs for the
// whole classifier): ns to get the SNI (and ALPN) from a real client's
// first bytes, over the captures of tests/data/classify/ in turn.
//   TlsSniScan       scan_client_hello: the host as soon as it has arrived (the TCP path)
//   TlsHelloFields   read_client_hello_fields: the whole ClientHello, host and ALPN
//   QuicInitial      a new QuicInitialReader fed the client's first datagrams:
//                    key derivation (5 HMACs), header protection, AES-128-GCM
//                    over each 1,200-1,250-byte Initial, reassembly, ClientHello
//   QuicInitialKeys  the key derivation alone
//   build/bench/first_bytes --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "proxy/quic_initial.h"
#include "proxy/tls_client_hello.h"
#include "tests/proxy/classify_corpus.h"

namespace {

using namespace egw::proxy;

std::vector<test_data::Capture> corpus(const std::string& file) {
  auto captures = test_data::load_corpus(std::string(EGW_CLASSIFY_DATA_DIR) + "/" + file);
  if (captures.empty()) std::abort();
  return captures;
}

void BM_TlsSniScan(benchmark::State& state, const std::string& file) {
  const auto captures = corpus(file);
  std::size_t i = 0;
  for (auto _ : state) {
    const SniScan s = scan_client_hello(captures[i++ % captures.size()].datagrams[0]);
    if (s.status != SniStatus::found) std::abort();
    benchmark::DoNotOptimize(s.host.data());
  }
}
BENCHMARK_CAPTURE(BM_TlsSniScan, openssl, std::string("tls_openssl.txt"));
BENCHMARK_CAPTURE(BM_TlsSniScan, curl, std::string("tls_curl.txt"));

void BM_TlsHelloFields(benchmark::State& state, const std::string& file) {
  const auto captures = corpus(file);
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& stream = captures[i++ % captures.size()].datagrams[0];
    const ClientHelloFields f = read_client_hello_fields(stream, HelloFraming::tls_records);
    if (f.status != SniStatus::found) std::abort();
    benchmark::DoNotOptimize(f.alpn.data());
  }
}
BENCHMARK_CAPTURE(BM_TlsHelloFields, openssl, std::string("tls_openssl.txt"));
BENCHMARK_CAPTURE(BM_TlsHelloFields, curl, std::string("tls_curl.txt"));

void BM_QuicInitial(benchmark::State& state, const std::string& file) {
  const auto captures = corpus(file);
  std::size_t i = 0, datagrams = 0;
  for (auto _ : state) {
    const auto& c = captures[i++ % captures.size()];
    QuicInitialReader reader;
    for (const auto& d : c.datagrams) reader.add_datagram(d);
    if (reader.result().status != QuicStatus::found) std::abort();
    datagrams += c.datagrams.size();
    benchmark::DoNotOptimize(reader.result().host.data());
  }
  state.counters["datagrams"] = benchmark::Counter(static_cast<double>(datagrams) / static_cast<double>(state.iterations()));
}
BENCHMARK_CAPTURE(BM_QuicInitial, aioquic, std::string("quic_aioquic.txt"));
BENCHMARK_CAPTURE(BM_QuicInitial, chrome, std::string("quic_chrome.txt"));

void BM_QuicInitialKeys(benchmark::State& state) {
  const std::vector<std::byte> dcid(8, std::byte{0x83});
  QuicInitialKeys keys;
  for (auto _ : state) {
    if (!quic_client_initial_keys(kQuicVersion1, dcid, keys)) std::abort();
    benchmark::DoNotOptimize(keys.key.data());
  }
}
BENCHMARK(BM_QuicInitialKeys);

}  // namespace
BENCHMARK_MAIN();
