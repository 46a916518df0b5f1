// The classification corpus, every capture: the SNI the TLS scanner and the
// QUIC Initial reader extract must be the host the client was pointed at,
// and the ALPN the names it offered, for 100 % of them (issue 21's corpus
// of real ClientHellos and QUIC Initials; tests/data/classify/capture.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "proxy/quic_initial.h"
#include "proxy/tls_client_hello.h"
#include "tests/proxy/classify_corpus.h"

namespace egw::proxy {
namespace {

using namespace test_data;

std::string path(const char* file) { return std::string(kClassifyDataDir) + "/" + file; }

TEST(ClassifyCorpus, TlsClientHellos) {
  for (const char* file : kTlsCorpusFiles) {
    const auto captures = load_corpus(path(file));
    EXPECT_GE(captures.size(), 100u) << file;
    for (const auto& c : captures) {
      ASSERT_EQ(c.datagrams.size(), 1u) << file << " " << c.host;
      const auto& stream = c.datagrams[0];
      const SniScan early = scan_client_hello(stream);
      EXPECT_EQ(early.status, SniStatus::found) << file << " " << c.host;
      EXPECT_EQ(early.host, c.host) << file;
      const ClientHelloFields whole = read_client_hello_fields(stream, HelloFraming::tls_records);
      EXPECT_EQ(whole.status, SniStatus::found) << file << " " << c.host;
      EXPECT_EQ(whole.host, c.host) << file;
      EXPECT_EQ(whole.alpn, c.alpn) << file << " " << c.host;
    }
  }
}

// In the order sent, and in reverse (a network may reorder the datagrams of
// a ClientHello that needs two).
TEST(ClassifyCorpus, QuicInitials) {
  std::size_t versions_2 = 0, multi_datagram = 0;
  for (const char* file : kQuicCorpusFiles) {
    const auto captures = load_corpus(path(file));
    EXPECT_GE(captures.size(), 30u) << file;
    for (const auto& c : captures) {
      auto datagrams = c.datagrams;
      for (int order = 0; order < 2; ++order) {
        QuicInitialReader reader;
        for (const auto& d : datagrams) reader.add_datagram(d);
        const QuicInitialScan& s = reader.result();
        EXPECT_EQ(s.status, QuicStatus::found) << file << " " << c.host << " order " << order;
        EXPECT_EQ(s.host, c.host) << file;
        EXPECT_EQ(s.alpn, c.alpn) << file << " " << c.host;
        if (order == 0) versions_2 += s.version == kQuicVersion2;
        std::ranges::reverse(datagrams);
      }
      multi_datagram += c.datagrams.size() > 1;
    }
  }
  EXPECT_GE(versions_2, 10u);      // aioquic's QUIC v2 captures
  EXPECT_GE(multi_datagram, 20u);  // Chromium's and aioquic's large ClientHellos
}

TEST(ClassifyCorpus, EveryHostCapturedAtLeastOnce) {
  std::set<std::string> captured;
  std::size_t total = 0;
  std::vector<const char*> files(std::begin(kTlsCorpusFiles), std::end(kTlsCorpusFiles));
  files.insert(files.end(), std::begin(kQuicCorpusFiles), std::end(kQuicCorpusFiles));
  for (const char* file : files) {
    for (const auto& c : load_corpus(path(file))) {
      captured.insert(c.host);
      ++total;
    }
  }
  const auto hosts = load_hosts(path("hosts.tsv"));
  EXPECT_GE(hosts.size(), 200u);
  for (const auto& h : hosts) EXPECT_TRUE(captured.contains(h)) << h;
  EXPECT_GE(total, 200u);
}

}  // namespace
}  // namespace egw::proxy
