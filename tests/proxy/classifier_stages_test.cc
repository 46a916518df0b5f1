// The classifier's stages for encrypted traffic (issue 21), with a fake
// detector so each stage's order is tested on its own: admin rules >
// detector by SNI > name tokens > detector by address > learned cache >
// unknown_host > default.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "proxy/classifier.h"
#include "tests/proxy/client_hello_builder.h"

namespace egw::proxy {
namespace {

using C = ContentClass;
using test_data::client_hello_records;

tunnel::Destination v4(std::uint8_t d, std::uint16_t port) {
  tunnel::Destination x;
  x.address[0] = 198; x.address[1] = 51; x.address[2] = 100; x.address[3] = d;
  x.port = port;
  return x;
}

class FakeDetector : public AppDetector {
 public:
  std::map<std::string, AppMatch, std::less<>> hosts;
  std::map<std::uint8_t, AppMatch> addresses;  // by the last address byte
  std::optional<AppMatch> by_host(std::string_view host) const override {
    auto it = hosts.find(host);
    return it == hosts.end() ? std::nullopt : std::optional(it->second);
  }
  std::optional<AppMatch> by_address(const tunnel::Destination& d) const override {
    auto it = addresses.find(d.address[3]);
    return it == addresses.end() ? std::nullopt : std::optional(it->second);
  }
};

config::ClassifyConfig config_with_rules() {
  config::ClassifyConfig c;
  c.sni = {{"*.calls.example.com", C::realtime}};
  c.destinations = {{std::get<config::DestinationRule>(config::parse_destination_rule("198.51.100.9/32")), C::bulk}};
  return c;
}

TEST(ClassifierStages, EachStageInItsOrder) {
  FakeDetector det;
  det.hosts.emplace("zoom.example", AppMatch{"Zoom", C::realtime});
  det.hosts.emplace("x.calls.example.com", AppMatch{"Other", C::bulk});
  det.addresses.emplace(7, AppMatch{"YouTube", C::streaming});
  det.addresses.emplace(9, AppMatch{"YouTube", C::streaming});
  const Classifier k(config_with_rules(), &det);
  auto open = [&](std::uint8_t d, const std::string& host) {
    return k.classify_open(v4(d, 443), host.empty() ? test_data::Bytes{} : client_hello_records(host));
  };
  EXPECT_EQ(open(9, "zoom.example").stage, Stage::destination_rule);  // the admin's destination first
  EXPECT_EQ(open(9, "zoom.example").cls, C::bulk);
  const auto rule = open(1, "x.calls.example.com");  // the admin's pattern before the detector
  EXPECT_EQ(rule.stage, Stage::sni_rule);
  EXPECT_EQ(rule.cls, C::realtime);
  const auto zoom = open(7, "zoom.example");  // the name before the address
  EXPECT_EQ(zoom.stage, Stage::sni_detector);
  EXPECT_EQ(zoom.cls, C::realtime);
  EXPECT_EQ(zoom.application, "Zoom");
  const auto tokens = open(2, "eu-download3.unknown.example");
  EXPECT_EQ(tokens.stage, Stage::sni_tokens);
  EXPECT_EQ(tokens.cls, C::bulk);
  const auto address = open(7, "nobody.example");
  EXPECT_EQ(address.stage, Stage::address_detector);
  EXPECT_EQ(address.application, "YouTube");
  const auto unknown = open(3, "nobody.example");
  EXPECT_EQ(unknown.stage, Stage::unknown_host);
  EXPECT_EQ(unknown.cls, C::web);
  const auto plain = k.classify_open(v4(3, 22), std::as_bytes(std::span("SSH-2.0-x\r\n", 11)));
  EXPECT_EQ(plain.stage, Stage::fallback);
  EXPECT_EQ(plain.cls, C::bulk);
}

TEST(ClassifierStages, TheLearnedCacheCoversConnectionsWithoutSni) {
  FakeDetector det;
  det.hosts.emplace("zoom.example", AppMatch{"Zoom", C::realtime});
  const Classifier k(config::ClassifyConfig{}, &det);
  const std::string_view ssh = "SSH-2.0-x\r\n";
  const auto before = k.classify_open(v4(5, 443), std::as_bytes(std::span(ssh.data(), ssh.size())));
  EXPECT_EQ(before.stage, Stage::fallback);
  k.classify_open(v4(5, 443), client_hello_records("zoom.example"));  // an SNI decision teaches it
  const auto after = k.classify_open(v4(5, 443), std::as_bytes(std::span(ssh.data(), ssh.size())));
  EXPECT_EQ(after.stage, Stage::learned);
  EXPECT_EQ(after.cls, C::realtime);
  EXPECT_EQ(after.application, "Zoom");
  // Another port of the same address is another service: not learned.
  EXPECT_EQ(k.classify_open(v4(5, 8443), std::as_bytes(std::span(ssh.data(), ssh.size()))).stage, Stage::fallback);
  // Still waiting for the ClientHello: the cache gives the provisional class.
  const auto waiting = k.classify_open(v4(5, 443), {});
  EXPECT_TRUE(waiting.need_more);
  EXPECT_EQ(waiting.cls, C::realtime);
}

TEST(ClassifierStages, TheCacheIsBoundedLeastRecentlyUsedFirst) {
  ClassifierCache cache(2);
  cache.learn(v4(1, 443), {"A", C::web});
  cache.learn(v4(2, 443), {"B", C::bulk});
  ASSERT_TRUE(cache.find(v4(1, 443)));  // 1 is now the most recent
  cache.learn(v4(3, 443), {"C", C::realtime});
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.find(v4(2, 443)));
  EXPECT_EQ(cache.find(v4(1, 443))->application, "A");
  EXPECT_EQ(cache.find(v4(3, 443))->category, C::realtime);
  ClassifierCache none(0);
  none.learn(v4(1, 443), {"A", C::web});
  EXPECT_FALSE(none.find(v4(1, 443)));
}

TEST(ClassifierStages, WithoutDetectionOnlyTheAdminsRulesDecide) {
  config::ClassifyConfig c = config_with_rules();
  c.detect_applications = false;
  const Classifier k(c);
  EXPECT_EQ(k.classify_open(v4(1, 443), client_hello_records("zoom.us")).stage, Stage::unknown_host);
  EXPECT_EQ(k.class_of_sni("eu-download3.unknown.example"), std::nullopt);
}

}  // namespace
}  // namespace egw::proxy
