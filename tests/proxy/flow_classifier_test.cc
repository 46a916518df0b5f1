// proxy/flow_classifier.h: a UDP flow's class from its first datagram, on
// the real QUIC Initials of the classification corpus.
#include "proxy/flow_classifier.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <variant>

#include "config/classify_config.h"
#include "config/net_prefix.h"
#include "proxy/classifier.h"
#include "tests/proxy/classify_corpus.h"

namespace egw::proxy {
namespace {

using test_data::load_corpus;

// `host`: the last address byte (each capture its own server, or the
// learned cache would answer for a name nothing knew).
tunnel::Destination to(std::uint16_t port, std::uint8_t host = 7) {
  tunnel::Destination d;
  d.family = tunnel::Destination::Family::ipv4;
  d.address = {198, 51, 100, host};
  d.port = port;
  return d;
}

std::string path(const char* file) { return std::string(test_data::kClassifyDataDir) + "/" + file; }

// Every aioquic Initial whose ClientHello fits its first datagram gets the
// class its name gets over TLS; Chromium's split ClientHellos only when the
// name is in the first datagram (counted, not required: the flow must not
// wait for the second).
TEST(FlowClassifier, QuicInitialsGetTheirNamesClass) {
  std::size_t single = 0, chrome = 0, chrome_named = 0;
  for (const char* file : test_data::kQuicCorpusFiles) {
    std::uint8_t server = 0;
    for (const auto& c : load_corpus(path(file))) {
      const Classifier k{config::ClassifyConfig{}};  // a fresh learned cache
      const auto by_name = k.class_of_sni(c.host);
      const Classifier::Decision d =
          classify_udp_flow(k, to(443, ++server), c.datagrams.front(), ContentClass::realtime);
      const bool named = d.stage == Stage::sni_rule || d.stage == Stage::sni_detector || d.stage == Stage::sni_tokens ||
                         d.stage == Stage::unknown_host;
      if (c.datagrams.size() == 1) {
        ++single;
        EXPECT_TRUE(named) << file << " " << c.host << ": " << to_string(d.stage);
        EXPECT_EQ(d.cls, by_name ? by_name->cls : ContentClass::web) << file << " " << c.host;
      }
      if (std::string(file) == "quic_chrome.txt") {
        ++chrome;
        chrome_named += named;
      }
    }
  }
  EXPECT_GE(single, 40u);
  std::printf("Chromium's split ClientHellos named by the first datagram: %zu of %zu\n", chrome_named, chrome);
}

TEST(FlowClassifier, WithoutANameTheAdminsClassForThePorts) {
  const Classifier k{config::ClassifyConfig{}};
  const std::byte rtp[] = {std::byte{0x80}, std::byte{0x00}, std::byte{0x12}, std::byte{0x34}};
  EXPECT_EQ(classify_udp_flow(k, to(3478), rtp, ContentClass::realtime).cls, ContentClass::realtime);
  // Port 443 but no QUIC: not a name, so the ports' class too.
  EXPECT_EQ(classify_udp_flow(k, to(443), rtp, ContentClass::interactive).cls, ContentClass::interactive);
}

TEST(FlowClassifier, AnAdminDestinationRuleWins) {
  config::ClassifyConfig cfg;
  const auto rule = config::parse_destination_rule("198.51.100.0/24:443");
  ASSERT_TRUE(std::holds_alternative<config::DestinationRule>(rule));
  cfg.destinations.emplace_back(std::get<config::DestinationRule>(rule), ContentClass::bulk);
  const Classifier k{cfg};
  const auto chrome = load_corpus(path("quic_aioquic.txt"));
  ASSERT_FALSE(chrome.empty());
  const Classifier::Decision d = classify_udp_flow(k, to(443), chrome.front().datagrams.front(), ContentClass::realtime);
  EXPECT_EQ(d.cls, ContentClass::bulk);
  EXPECT_EQ(d.stage, Stage::destination_rule);
}

}  // namespace
}  // namespace egw::proxy
