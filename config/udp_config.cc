#include "config/udp_config.h"

#include <variant>

namespace egw::config {

void apply_udp(const UdpConfig& u, tunnel::ConnectionConfig& c) {
  c.datagram_deadline = std::chrono::milliseconds(u.deadline_ms);
  c.datagram_queue_datagrams = u.queue_datagrams;
  // Without the section the hub opens no flow (its table is empty): the
  // tunnel refuses a peer's flows beyond this bound before the hub sees them.
  c.max_incoming_flows = u.enabled ? u.flows_per_peer : 0;
}

bool same_udp(const UdpConfig& a, const UdpConfig& b) {
  return a.enabled == b.enabled && a.ports.ranges == b.ports.ranges && a.content_class == b.content_class &&
         a.listen == b.listen && a.carry_quic == b.carry_quic && a.deadline_ms == b.deadline_ms &&
         a.queue_datagrams == b.queue_datagrams && a.idle_timeout_s == b.idle_timeout_s &&
         a.dns_idle_timeout_s == b.dns_idle_timeout_s && a.flows_per_peer == b.flows_per_peer &&
         a.flows_per_client == b.flows_per_client;
}

UdpConfig parse_udp(const Reader& r, const YAML::Node& n, bool is_hub) {
  UdpConfig u;
  if (!n || n.IsNull()) return u;
  const std::string s = "udp";
  if (!n.IsMap()) r.fail(n, s, "expected a mapping");
  r.only_keys(n, s, {"ports", "class", "listen", "carry_quic", "deadline_ms", "queue_datagrams", "idle_timeout_s",
                     "dns_idle_timeout_s", "flows_per_peer", "flows_per_client"});
  u.enabled = true;
  for (const char* key : {"ports", "class", "listen", "carry_quic", "flows_per_client"}) {
    if (is_hub && n[key]) r.fail(n[key], s + "." + key, "only a branch intercepts");
  }
  if (n["ports"]) {
    std::string text;
    for (const auto& item : r.strings(n["ports"], s + ".ports")) text += (text.empty() ? "" : ",") + item;
    if (text == "*") {
      r.fail(n["ports"], s + ".ports", "name the ports: every UDP port would take the LAN's DNS and more");
    }
    auto pr = parse_ports(text);
    if (auto* err = std::get_if<std::string>(&pr)) r.fail(n["ports"], s + ".ports", *err);
    u.ports = std::get<PortRanges>(pr);
  }
  if (n["class"]) {
    const std::string name = r.string(n, "class", s + ".class");
    const auto cls = content_class_from_string(name);
    if (!cls) r.fail(n["class"], s + ".class", "unknown class '" + name + "'");
    u.content_class = *cls;
  }
  u.listen = r.string_or(n, "listen", s + ".listen", u.listen);
  u.carry_quic = r.boolean_or(n, "carry_quic", s + ".carry_quic", u.carry_quic);
  const auto u32 = [&](const char* key, std::uint32_t fallback, std::int64_t min, std::int64_t max) {
    return static_cast<std::uint32_t>(r.integer_or(n, key, s + "." + key, fallback, min, max));
  };
  u.deadline_ms = u32("deadline_ms", u.deadline_ms, 1, 10'000);
  u.queue_datagrams = u32("queue_datagrams", u.queue_datagrams, 1, 65'536);
  u.idle_timeout_s = u32("idle_timeout_s", u.idle_timeout_s, 1, 86'400);
  u.dns_idle_timeout_s = u32("dns_idle_timeout_s", u.dns_idle_timeout_s, 1, 86'400);
  u.flows_per_peer = u32("flows_per_peer", u.flows_per_peer, 1, 1'000'000);
  u.flows_per_client = u32("flows_per_client", u.flows_per_client, 1, 1'000'000);
  if (u.flows_per_client > u.flows_per_peer) {
    r.fail(n["flows_per_client"], s + ".flows_per_client", "more than flows_per_peer");
  }
  return u;
}

}  // namespace egw::config
