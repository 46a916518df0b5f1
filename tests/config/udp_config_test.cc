// The `udp:` section (config/udp_config.h): defaults, the branch's keys, the
// tunnel settings it implies, and errors that name file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/gateway_config.h"

namespace egw::config {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey = "YAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=";
constexpr const char* kPeer = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=";

class UdpConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("egw-udp-config-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "key") << kKey << "\n";
    fs::permissions(dir_ / "key", fs::perms::owner_read | fs::perms::owner_write);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::variant<GatewayConfig, std::string> load(const std::string& text) {
    const fs::path p = dir_ / "c.yaml";
    std::ofstream(p) << text;
    return load_gateway_config(p.string());
  }
  std::string branch(const std::string& extra) {
    return "role: branch\nprivate_key_file: " + (dir_ / "key").string() + "\npeers:\n  - name: hub\n    public_key: " +
           kPeer + "\n    endpoint: 192.0.2.1:51900\ninterception:\n  lan: [10.1.0.0/16]\n" + extra;
  }
  std::string hub(const std::string& extra) {
    return "role: hub\nprivate_key_file: " + (dir_ / "key").string() +
           "\nlisten: 0.0.0.0:51900\npeers:\n  - name: b1\n    public_key: " + kPeer +
           "\n    allow: [10.2.0.0/16]\n" + extra;
  }
  std::string error_of(const std::string& text) {
    auto r = load(text);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(loaded)";
  }
  fs::path dir_;
};

TEST_F(UdpConfigTest, AbsentCarriesNoUdp) {
  auto r = load(branch(""));
  ASSERT_TRUE(std::holds_alternative<GatewayConfig>(r)) << std::get<std::string>(r);
  const auto& c = std::get<GatewayConfig>(r);
  EXPECT_FALSE(c.udp.enabled);
  EXPECT_FALSE(c.udp.intercepts());
  EXPECT_EQ(c.endpoint.connection.max_incoming_flows, 0u);  // a peer's flows are refused
}

TEST_F(UdpConfigTest, BranchSection) {
  auto r = load(branch("udp:\n  ports: [3478-3481, 5060, \"8801-8810\"]\n  class: image\n  deadline_ms: 80\n"
                       "  idle_timeout_s: 90\n  flows_per_peer: 100\n  flows_per_client: 10\n  carry_quic: true\n"));
  ASSERT_TRUE(std::holds_alternative<GatewayConfig>(r)) << std::get<std::string>(r);
  const auto& c = std::get<GatewayConfig>(r);
  EXPECT_TRUE(c.udp.intercepts());
  EXPECT_TRUE(c.udp.ports.contains(3479));
  EXPECT_TRUE(c.udp.ports.contains(5060));
  EXPECT_FALSE(c.udp.ports.contains(53));
  EXPECT_EQ(c.udp.content_class, ContentClass::image);
  EXPECT_TRUE(c.udp.carry_quic);
  EXPECT_EQ(c.udp.listen, "0.0.0.0:15002");
  EXPECT_EQ(c.udp.dns_idle_timeout_s, 30u);
  EXPECT_EQ(c.endpoint.connection.datagram_deadline, ms(80));
  EXPECT_EQ(c.endpoint.connection.max_incoming_flows, 100u);
  EXPECT_EQ(c.endpoint.connection.datagram_queue_datagrams, 64u);
}

TEST_F(UdpConfigTest, HubSection) {
  auto r = load(hub("udp: {idle_timeout_s: 60, flows_per_peer: 2000}\n"));
  ASSERT_TRUE(std::holds_alternative<GatewayConfig>(r)) << std::get<std::string>(r);
  const auto& c = std::get<GatewayConfig>(r);
  EXPECT_TRUE(c.udp.enabled);
  EXPECT_FALSE(c.udp.intercepts());
  EXPECT_EQ(c.endpoint.connection.max_incoming_flows, 2000u);
}

TEST_F(UdpConfigTest, ErrorsNameFileLineAndKey) {
  const std::string b = branch("");
  const std::size_t line = static_cast<std::size_t>(std::count(b.begin(), b.end(), '\n')) + 2;
  const auto at = [&](const std::string& key) { return "c.yaml:" + std::to_string(line) + ": " + key + ": "; };
  EXPECT_NE(error_of(branch("udp:\n  class: voice\n")).find(at("udp.class") + "unknown class 'voice'"),
            std::string::npos)
      << error_of(branch("udp:\n  class: voice\n"));
  EXPECT_NE(error_of(branch("udp:\n  ports: [0]\n")).find(at("udp.ports")), std::string::npos);
  EXPECT_NE(error_of(branch("udp:\n  ports: \"*\"\n")).find(at("udp.ports") + "name the ports"), std::string::npos);
  EXPECT_NE(error_of(branch("udp:\n  deadline_ms: 0\n")).find(at("udp.deadline_ms")), std::string::npos);
  EXPECT_NE(error_of(branch("udp:\n  flows_per_client: 5000\n")).find(at("udp.flows_per_client") + "more than"),
            std::string::npos);
  EXPECT_NE(error_of(branch("udp:\n  colour: blue\n")).find("udp.colour"), std::string::npos);
  EXPECT_NE(error_of(hub("udp:\n  ports: [5060]\n")).find("udp.ports: only a branch intercepts"), std::string::npos);
}

TEST_F(UdpConfigTest, ChangingItNeedsARestart) {
  auto a = load(branch("udp: {ports: [5060]}\n"));
  auto b = load(branch("udp: {ports: [5061]}\n"));
  ASSERT_TRUE(std::holds_alternative<GatewayConfig>(a));
  ASSERT_TRUE(std::holds_alternative<GatewayConfig>(b));
  const auto why = reload_incompatibility(std::get<GatewayConfig>(a), std::get<GatewayConfig>(b));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("udp"), std::string::npos);
  EXPECT_FALSE(reload_incompatibility(std::get<GatewayConfig>(a), std::get<GatewayConfig>(a)));
}

}  // namespace
}  // namespace egw::config
