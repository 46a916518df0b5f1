// The interception rules (proxy/nft_table.h) rendered as `nft -f` text and as
// libnftables JSON. Both come from one list of chains and rules built once,
// so the printed script is exactly what install() applies.
#include "proxy/nft_table.h"

#include <string_view>

namespace egw::proxy {
namespace {

// One match or statement, in both notations.
struct Expr {
  std::string script;
  std::string json;
};
using Rule = std::vector<Expr>;

struct Chain {
  const char* name;
  const char* type;
  const char* hook;
  const char* priority;  // the script's symbolic name
  int prio;              // its value, as `nft -j list` shows it
  std::vector<Rule> rules;
};

struct Family {
  bool v4;
  const char* ip;    // "ip", "ip6": the payload protocol of the address matches
  const char* icmp;  // the reject type
};
constexpr Family kFamilies[] = {{true, "ip", "icmp"}, {false, "ip6", "icmpv6"}};

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::vector<config::IpPrefix> of_family(const std::vector<config::IpPrefix>& prefixes, const Family& f) {
  std::vector<config::IpPrefix> out;
  for (const auto& p : prefixes) {
    if (p.v4() == f.v4) out.push_back(p);
  }
  return out;
}

// `left == value` or `left == { a, b }`: one item is written bare, as nft prints it.
Expr match(const std::string& left_script, const std::string& left_json,
           const std::vector<std::string>& script_items, const std::vector<std::string>& json_items) {
  std::string script = script_items.size() == 1 ? script_items[0] : "{ ";
  std::string json = json_items.size() == 1 ? json_items[0] : "{\"set\":[";
  if (script_items.size() != 1) {
    for (std::size_t i = 0; i < script_items.size(); ++i) {
      script += (i ? ", " : "") + script_items[i];
      json += (i ? "," : "") + json_items[i];
    }
    script += " }";
    json += "]}";
  }
  return {left_script + " " + script, "{\"match\":{\"op\":\"==\",\"left\":" + left_json + ",\"right\":" + json + "}}"};
}

std::string payload(const char* protocol, const char* field) {
  return std::string("{\"payload\":{\"protocol\":\"") + protocol + "\",\"field\":\"" + field + "\"}}";
}

Expr address_match(const Family& f, const char* field, const std::vector<config::IpPrefix>& prefixes) {
  std::vector<std::string> script, json;
  for (const auto& p : prefixes) {
    const std::string address = config::ip16_to_string(p.address);
    const int length = f.v4 ? p.bits - 96 : p.bits;
    script.push_back(address + "/" + std::to_string(length));
    json.push_back("{\"prefix\":{\"addr\":" + quoted(address) + ",\"len\":" + std::to_string(length) + "}}");
  }
  return match(std::string(f.ip) + " " + field, payload(f.ip, field), script, json);
}

// `tcp dport { 80, 8000-8099 }`; every port: `meta l4proto tcp`, which also
// gives redirect the transport protocol it needs.
Expr port_match(const char* protocol, const config::PortRanges& ports) {
  if (ports.all()) {
    return match("meta l4proto", "{\"meta\":{\"key\":\"l4proto\"}}", {protocol}, {quoted(protocol)});
  }
  std::vector<std::string> script, json;
  for (const auto& [lo, hi] : ports.ranges) {
    if (lo == hi) {
      script.push_back(std::to_string(lo));
      json.push_back(std::to_string(lo));
    } else {
      script.push_back(std::to_string(lo) + "-" + std::to_string(hi));
      json.push_back("{\"range\":[" + std::to_string(lo) + "," + std::to_string(hi) + "]}");
    }
  }
  return match(std::string(protocol) + " dport", payload(protocol, "dport"), script, json);
}

Expr fib_local() {
  return match("fib daddr type", "{\"fib\":{\"result\":\"type\",\"flags\":[\"daddr\"]}}", {"local"},
               {quoted("local")});
}

Expr accept() { return {"accept", "{\"accept\":null}"}; }

Expr set_mark(std::uint32_t mark) {
  return {"meta mark set " + std::to_string(mark),
          "{\"mangle\":{\"key\":{\"meta\":{\"key\":\"mark\"}},\"value\":" + std::to_string(mark) + "}}"};
}

Expr tproxy_v4(std::uint16_t port) {
  return {"tproxy ip to :" + std::to_string(port),
          "{\"tproxy\":{\"family\":\"ip\",\"port\":" + std::to_string(port) + "}}"};
}

Expr redirect(std::uint16_t port) {
  return {"redirect to :" + std::to_string(port), "{\"redirect\":{\"port\":" + std::to_string(port) + "}}"};
}

// Port unreachable rather than admin-prohibited: the usual advice for
// making Chrome and Firefox drop QUIC at once (a connected UDP socket reads
// ECONNREFUSED), not after their handshake timeout.
Expr reject_port_unreachable(const Family& f) {
  return {std::string("reject with ") + f.icmp + " port-unreachable",
          std::string("{\"reject\":{\"type\":\"") + f.icmp + "\",\"expr\":\"port-unreachable\"}}"};
}

std::vector<Rule> bypass_rules(const InterceptionRules& r) {
  std::vector<Rule> rules;
  for (const Family& f : kFamilies) {
    if (const auto bypass = of_family(r.bypass, f); !bypass.empty()) {
      rules.push_back({address_match(f, "daddr", bypass), accept()});
    }
  }
  return rules;
}

std::vector<Chain> chains_of(const InterceptionRules& r) {
  Chain nat{"prerouting", "nat", "prerouting", "dstnat", -100, {{fib_local(), accept()}}};
  for (Rule& rule : bypass_rules(r)) nat.rules.push_back(std::move(rule));
  for (const Family& f : kFamilies) {
    if (const auto lan = of_family(r.lan, f); !lan.empty()) {
      nat.rules.push_back({address_match(f, "saddr", lan), port_match("tcp", r.ports), redirect(r.redirect_port)});
    }
  }
  std::vector<Chain> chains{std::move(nat)};
  if (r.reject_quic) {
    Chain forward{"forward", "filter", "forward", "filter", 0, bypass_rules(r)};
    const config::PortRanges quic{{{443, 443}}};
    for (const Family& f : kFamilies) {
      if (const auto lan = of_family(r.lan, f); !lan.empty()) {
        forward.rules.push_back({address_match(f, "saddr", lan), port_match("udp", quic), reject_port_unreachable(f)});
      }
    }
    chains.push_back(std::move(forward));
  }
  if (r.udp_tproxy_port != 0) {
    // Mangle priority, before routing: the mark picks the policy route to
    // the local host, and TPROXY hands the packet to our socket unchanged.
    Chain tproxy{"udp_tproxy", "filter", "prerouting", "mangle", -150, {{fib_local(), accept()}}};
    const Family& v4 = kFamilies[0];
    if (const auto bypass = of_family(r.bypass, v4); !bypass.empty()) {
      tproxy.rules.push_back({address_match(v4, "daddr", bypass), accept()});
    }
    if (const auto lan = of_family(r.lan, v4); !lan.empty()) {
      tproxy.rules.push_back({address_match(v4, "saddr", lan), port_match("udp", r.udp_ports), set_mark(r.udp_mark),
                              tproxy_v4(r.udp_tproxy_port), accept()});
    }
    chains.push_back(std::move(tproxy));
  }
  return chains;
}

}  // namespace

std::string render_nft_script(const InterceptionRules& r) {
  const std::string table = "table inet " + r.table;
  std::string out = "# ensemble-gw transparent interception; apply with `nft -f FILE`.\n"
                    "# Replaces any " + table + " in one transaction; undo with:\n"
                    "#   nft delete " + table + "\n" +
                    table + " {}\n"
                    "delete " + table + "\n" +
                    table + " {\n";
  bool first = true;
  for (const Chain& c : chains_of(r)) {
    if (!first) out += "\n";
    first = false;
    out += std::string("\tchain ") + c.name + " {\n\t\ttype " + c.type + " hook " + c.hook + " priority " +
           c.priority + "; policy accept;\n";
    for (const Rule& rule : c.rules) {
      out += "\t\t";
      for (std::size_t i = 0; i < rule.size(); ++i) out += (i ? " " : "") + rule[i].script;
      out += "\n";
    }
    out += "\t}\n";
  }
  return out + "}\n";
}

std::string render_nft_json(const InterceptionRules& r) {
  const std::string table = "\"family\":\"inet\",\"table\":" + quoted(r.table);
  const std::string add_table = "{\"add\":{\"table\":{\"family\":\"inet\",\"name\":" + quoted(r.table) + "}}}";
  const std::string delete_table = "{\"delete\":{\"table\":{\"family\":\"inet\",\"name\":" + quoted(r.table) + "}}}";
  // Add first: deleting a table that is not there would fail the whole batch.
  std::string out = "{\"nftables\":[\n" + add_table + ",\n" + delete_table + ",\n" + add_table;
  for (const Chain& c : chains_of(r)) {
    out += ",\n{\"add\":{\"chain\":{" + table + ",\"name\":" + quoted(c.name) + ",\"type\":" + quoted(c.type) +
           ",\"hook\":" + quoted(c.hook) + ",\"prio\":" + std::to_string(c.prio) + ",\"policy\":\"accept\"}}}";
    for (const Rule& rule : c.rules) {
      out += ",\n{\"add\":{\"rule\":{" + table + ",\"chain\":" + quoted(c.name) + ",\"expr\":[";
      for (std::size_t i = 0; i < rule.size(); ++i) out += (i ? "," : "") + rule[i].json;
      out += "]}}}";
    }
  }
  return out + "\n]}\n";
}

std::string render_nft_stop_new_json(const std::string& table) {
  // Inserted first: a new connection is accepted before any redirect. The
  // redirect rules stay, and with them the translation of the connections
  // they redirected (a NAT chain only ever sees a connection's first packet).
  return "{\"nftables\":[{\"insert\":{\"rule\":{\"family\":\"inet\",\"table\":" + quoted(table) +
         ",\"chain\":\"prerouting\",\"expr\":[{\"match\":{\"op\":\"in\",\"left\":{\"ct\":{\"key\":\"state\"}},"
         "\"right\":\"new\"}},{\"accept\":null}]}}}]}\n";
}

}  // namespace egw::proxy
