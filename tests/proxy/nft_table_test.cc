// The interception table as text: the script an admin applies by hand and
// the JSON install() hands to libnftables. netns_intercept_test.sh checks
// that the kernel accepts both and that they give the same ruleset.
#include "proxy/nft_table.h"

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

config::IpPrefix prefix(const char* text) { return std::get<config::IpPrefix>(config::parse_ip_prefix(text)); }
config::PortRanges ports(const char* text) { return std::get<config::PortRanges>(config::parse_ports(text)); }

InterceptionRules dual_stack() {
  InterceptionRules r;
  r.lan = {prefix("10.77.1.0/24"), prefix("fd77:1::/64"), prefix("192.168.0.0/16")};
  r.ports = ports("80,8000-8099");
  r.redirect_port = 15001;
  r.bypass = {prefix("203.0.113.9"), prefix("2001:db8::/32")};
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NftScript, ReplacesTheTableAndRedirectsBothFamilies) {
  const std::string expected =
      "# ensemble-gw transparent interception; apply with `nft -f FILE`.\n"
      "# Replaces any table inet ensemble_gw in one transaction; undo with:\n"
      "#   nft delete table inet ensemble_gw\n"
      "table inet ensemble_gw {}\n"
      "delete table inet ensemble_gw\n"
      "table inet ensemble_gw {\n"
      "\tchain prerouting {\n"
      "\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
      "\t\tfib daddr type local accept\n"
      "\t\tip daddr 203.0.113.9/32 accept\n"
      "\t\tip6 daddr 2001:db8::/32 accept\n"
      "\t\tip saddr { 10.77.1.0/24, 192.168.0.0/16 } tcp dport { 80, 8000-8099 } redirect to :15001\n"
      "\t\tip6 saddr fd77:1::/64 tcp dport { 80, 8000-8099 } redirect to :15001\n"
      "\t}\n"
      "}\n";
  EXPECT_EQ(render_nft_script(dual_stack()), expected);
}

TEST(NftScript, RejectsQuicFromTheLanButNotToBypassedDestinations) {
  InterceptionRules r = dual_stack();
  r.reject_quic = true;
  const std::string script = render_nft_script(r);
  EXPECT_TRUE(contains(script,
                       "\tchain forward {\n"
                       "\t\ttype filter hook forward priority filter; policy accept;\n"
                       "\t\tip daddr 203.0.113.9/32 accept\n"
                       "\t\tip6 daddr 2001:db8::/32 accept\n"
                       "\t\tip saddr { 10.77.1.0/24, 192.168.0.0/16 } udp dport 443 reject with icmp port-unreachable\n"
                       "\t\tip6 saddr fd77:1::/64 udp dport 443 reject with icmpv6 port-unreachable\n"
                       "\t}\n"))
      << script;
  EXPECT_FALSE(contains(render_nft_script(dual_stack()), "forward"));
}

// UDP flows (udp.ports): IPv4 UDP from the LAN to the transparent socket by
// TPROXY with the policy route's mark, in a mangle-priority prerouting chain;
// bypassed and local destinations are left alone.
TEST(NftScript, UdpFlowsByTproxy) {
  InterceptionRules r = dual_stack();
  r.udp_ports = ports("3478-3481,5060");
  r.udp_tproxy_port = 15002;
  r.udp_mark = 0x4547;
  const std::string script = render_nft_script(r);
  EXPECT_TRUE(contains(script,
                       "\tchain udp_tproxy {\n"
                       "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
                       "\t\tfib daddr type local accept\n"
                       "\t\tip daddr 203.0.113.9/32 accept\n"
                       "\t\tip saddr { 10.77.1.0/24, 192.168.0.0/16 } udp dport { 3478-3481, 5060 } "
                       "meta mark set 17735 tproxy ip to :15002 accept\n"
                       "\t}\n"))
      << script;
  const std::string json = render_nft_json(r);
  EXPECT_TRUE(contains(json, "\"name\":\"udp_tproxy\",\"type\":\"filter\",\"hook\":\"prerouting\",\"prio\":-150"))
      << json;
  EXPECT_TRUE(contains(json, "{\"mangle\":{\"key\":{\"meta\":{\"key\":\"mark\"}},\"value\":17735}},"
                             "{\"tproxy\":{\"family\":\"ip\",\"port\":15002}},{\"accept\":null}"))
      << json;
  EXPECT_FALSE(contains(render_nft_script(dual_stack()), "udp_tproxy"));
}

TEST(NftScript, EveryPortAndOneFamily) {
  InterceptionRules r;
  r.table = "egw_branch";
  r.lan = {prefix("10.0.0.0/8")};
  r.redirect_port = 12345;
  const std::string script = render_nft_script(r);
  // Every port: the protocol match alone (redirect needs one).
  EXPECT_TRUE(contains(script, "\t\tip saddr 10.0.0.0/8 meta l4proto tcp redirect to :12345\n")) << script;
  EXPECT_FALSE(contains(script, "ip6"));
  EXPECT_FALSE(contains(script, "ip daddr"));  // no bypass rule
  EXPECT_TRUE(contains(script, "delete table inet egw_branch\ntable inet egw_branch {\n"));

  r.lan = {prefix("2001:db8:1::/48")};
  EXPECT_FALSE(contains(render_nft_script(r), "ip saddr"));
  EXPECT_TRUE(contains(render_nft_script(r), "ip6 saddr 2001:db8:1::/48 meta l4proto tcp redirect to :12345"));
}

TEST(NftJson, OneTransactionThatReplacesTheTable) {
  InterceptionRules r;
  r.lan = {prefix("10.77.1.0/24")};
  r.ports = ports("80");
  r.redirect_port = 15001;
  const std::string expected =
      "{\"nftables\":[\n"
      "{\"add\":{\"table\":{\"family\":\"inet\",\"name\":\"ensemble_gw\"}}},\n"
      "{\"delete\":{\"table\":{\"family\":\"inet\",\"name\":\"ensemble_gw\"}}},\n"
      "{\"add\":{\"table\":{\"family\":\"inet\",\"name\":\"ensemble_gw\"}}},\n"
      "{\"add\":{\"chain\":{\"family\":\"inet\",\"table\":\"ensemble_gw\",\"name\":\"prerouting\",\"type\":\"nat\","
      "\"hook\":\"prerouting\",\"prio\":-100,\"policy\":\"accept\"}}},\n"
      "{\"add\":{\"rule\":{\"family\":\"inet\",\"table\":\"ensemble_gw\",\"chain\":\"prerouting\",\"expr\":["
      "{\"match\":{\"op\":\"==\",\"left\":{\"fib\":{\"result\":\"type\",\"flags\":[\"daddr\"]}},\"right\":\"local\"}},"
      "{\"accept\":null}]}}},\n"
      "{\"add\":{\"rule\":{\"family\":\"inet\",\"table\":\"ensemble_gw\",\"chain\":\"prerouting\",\"expr\":["
      "{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"ip\",\"field\":\"saddr\"}},"
      "\"right\":{\"prefix\":{\"addr\":\"10.77.1.0\",\"len\":24}}}},"
      "{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"tcp\",\"field\":\"dport\"}},\"right\":80}},"
      "{\"redirect\":{\"port\":15001}}]}}}\n"
      "]}\n";
  EXPECT_EQ(render_nft_json(r), expected);
}

// Draining: one rule in front, nothing deleted (the redirects keep
// translating the connections they redirected until those end).
TEST(NftJson, DrainingAcceptsNewConnectionsFirstAndKeepsTheRedirects) {
  const std::string expected =
      "{\"nftables\":[{\"insert\":{\"rule\":{\"family\":\"inet\",\"table\":\"ensemble_gw\",\"chain\":\"prerouting\","
      "\"expr\":[{\"match\":{\"op\":\"in\",\"left\":{\"ct\":{\"key\":\"state\"}},\"right\":\"new\"}},"
      "{\"accept\":null}]}}}]}\n";
  EXPECT_EQ(render_nft_stop_new_json("ensemble_gw"), expected);
  EXPECT_TRUE(NftTable::stop_new("no such name"));  // an invalid name is refused before nft runs
}

TEST(NftJson, SetsRangesIp6AndQuicReject) {
  InterceptionRules r = dual_stack();
  r.reject_quic = true;
  const std::string json = render_nft_json(r);
  EXPECT_TRUE(contains(json, "\"right\":{\"set\":[{\"prefix\":{\"addr\":\"10.77.1.0\",\"len\":24}},"
                             "{\"prefix\":{\"addr\":\"192.168.0.0\",\"len\":16}}]}"));
  EXPECT_TRUE(contains(json, "{\"payload\":{\"protocol\":\"ip6\",\"field\":\"saddr\"}},"
                             "\"right\":{\"prefix\":{\"addr\":\"fd77:1::\",\"len\":64}}"));
  EXPECT_TRUE(contains(json, "\"right\":{\"set\":[80,{\"range\":[8000,8099]}]}"));
  EXPECT_TRUE(contains(json, "{\"payload\":{\"protocol\":\"ip6\",\"field\":\"daddr\"}},"
                             "\"right\":{\"prefix\":{\"addr\":\"2001:db8::\",\"len\":32}}}},{\"accept\":null}"));
  EXPECT_TRUE(contains(json, "\"name\":\"forward\",\"type\":\"filter\",\"hook\":\"forward\",\"prio\":0"));
  EXPECT_TRUE(contains(json, "{\"payload\":{\"protocol\":\"udp\",\"field\":\"dport\"}},\"right\":443}},"
                             "{\"reject\":{\"type\":\"icmp\",\"expr\":\"port-unreachable\"}}"));
  EXPECT_TRUE(contains(json, "{\"reject\":{\"type\":\"icmpv6\",\"expr\":\"port-unreachable\"}}"));
  // The delete comes after an add: no error when the table is absent.
  EXPECT_LT(json.find("{\"add\":{\"table\""), json.find("{\"delete\":{\"table\""));
}

TEST(NftJson, EveryPortMatchesTheProtocol) {
  InterceptionRules r = dual_stack();
  r.ports = {};
  EXPECT_TRUE(contains(render_nft_json(r),
                       "{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"l4proto\"}},\"right\":\"tcp\"}},"
                       "{\"redirect\":{\"port\":15001}}"));
}

TEST(NftRules, CheckedBeforeInstalling) {
  EXPECT_EQ(check_rules(dual_stack()), std::nullopt);
  InterceptionRules r = dual_stack();
  r.table = "ensemble gw";  // would need quoting in the script
  EXPECT_TRUE(check_rules(r));
  r.table = "9lives";
  EXPECT_TRUE(check_rules(r));
  r.table = "";
  EXPECT_TRUE(check_rules(r));
  r = dual_stack();
  r.lan.clear();
  EXPECT_TRUE(check_rules(r));
  r = dual_stack();
  r.redirect_port = 0;
  EXPECT_TRUE(check_rules(r));
  // install() refuses before touching nftables (no privileges needed to see it).
  EXPECT_TRUE(NftTable::install(r));
  EXPECT_TRUE(NftTable::remove("no such name"));
  EXPECT_FALSE(NftTable::exists("no such name"));
}

}  // namespace
}  // namespace egw::proxy
