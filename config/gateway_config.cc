#include "config/gateway_config.h"

#include <algorithm>
#include <charconv>

#include "config/bit_rate.h"
#include "tunnel/crypto/cpu_features.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::config {
namespace {

using tunnel::session::PeerAddress;

// "A.B.C.D:PORT" or "[V6]:PORT" (no names: a gateway must not depend on DNS to start).
std::variant<PeerAddress, std::string> parse_address_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return "expected ADDRESS:PORT, got '" + text + "'";
  auto prefix = parse_ip_prefix(text.substr(0, colon));
  if (auto* err = std::get_if<std::string>(&prefix)) return *err;
  const IpPrefix& p = std::get<IpPrefix>(prefix);
  if (p.bits != 128) return "expected an address, not a prefix, in '" + text + "'";
  int port = -1;
  const std::string port_text = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    return "bad port in '" + text + "'";
  }
  PeerAddress a;
  a.ip = p.address;
  a.port = static_cast<std::uint16_t>(port);
  return a;
}

class Loader {
 public:
  explicit Loader(const Reader& r) : r_(r) {}

  GatewayConfig load(const YAML::Node& root) {
    r_.only_keys(root, "", {"role", "private_key_file", "listen", "max_datagram_bytes", "cipher", "peers",
                            "interception", "ensemble", "scheduler", "classify", "temporal_cache",
                            "limits", "log_level", "metrics_listen", "status_socket", "user",
                            "handshake_state_file", "udp"});
    GatewayConfig c;
    c.path = r_.path();
    const std::string role = r_.string(root, "role", "role");
    if (role != "branch" && role != "hub") r_.fail(root["role"], "role", "expected 'branch' or 'hub'");
    c.is_hub = role == "hub";
    c.endpoint.initiator = !c.is_hub;
    c.endpoint.private_key = key_file(root, "private_key_file", "private_key_file", c.warnings);
    tunnel_settings(root, c);
    peers(root, c);
    if (!c.is_hub) {
      if (!root["interception"]) r_.fail(root, "interception", "missing (a branch needs at least interception.lan, or mode: none)");
      interception(root["interception"], c.interception);
    }
    else if (root["interception"]) r_.fail(root["interception"], "interception", "only a branch intercepts");
    ensemble(root["ensemble"], c.endpoint.connection.ensemble);
    if (root["ensemble"]) {
      max_rate(root["ensemble"]["max_rate"], c.endpoint.connection);
    }
    ack_decimation(root, c.endpoint.connection);
    // On a path whose recent loss rate is at least 0.1 % (tunnel/connection.h).
    const bool copies = root["ensemble"] ? r_.boolean_or(root["ensemble"], "thin_stream_copies",
                                                         "ensemble.thin_stream_copies", true)
                                         : true;
    c.endpoint.connection.thin_stream_copy_loss_ppm = copies ? 1000 : 0;
    c.reloadable.scheduler = scheduler(root["scheduler"]);
    c.endpoint.connection.ensemble.scheduler = c.reloadable.scheduler;
    if (const YAML::Node s = root["scheduler"]) {
      c.endpoint.connection.peer_knows_categories_override = peer_knows_categories(s);
    }
    c.reloadable.classify = parse_classify(r_, root["classify"]);
    cache(root["temporal_cache"], c);
    c.handshake_state_file = r_.string_or(root, "handshake_state_file", "handshake_state_file", "");
    c.reloadable.limits = limits(root["limits"]);
    apply_limits(c.reloadable.limits, c.endpoint.connection);
    c.udp = parse_udp(r_, root["udp"], c.is_hub);
    apply_udp(c.udp, c.endpoint.connection);
    c.reloadable.log_level = r_.string_or(root, "log_level", "log_level", "info");
    if (!is_log_level(c.reloadable.log_level)) {
      r_.fail(root["log_level"], "log_level", "expected trace, debug, info, warn or error");
    }
    c.metrics_listen = r_.string_or(root, "metrics_listen", "metrics_listen", c.metrics_listen);
    if (!c.metrics_listen.empty()) address(root["metrics_listen"], "metrics_listen", c.metrics_listen);
    c.status_socket = r_.string_or(root, "status_socket", "status_socket", "/run/ensemble-gw/" + role + ".sock");
    if (c.status_socket.size() > kMaxUnixSocketPathBytes) {
      r_.fail(root["status_socket"], "status_socket",
              "path of " + std::to_string(c.status_socket.size()) + " bytes; a Unix socket's holds at most " +
                  std::to_string(kMaxUnixSocketPathBytes));
    }
    if (root["user"]) {
      c.user = r_.string(root, "user", "user");
      if (c.user.empty() || c.user.find_first_of(" \t:/") != std::string::npos) {
        r_.fail(root["user"], "user", "expected a user name or number");
      }
    }
    return c;
  }

 private:
  static bool is_log_level(const std::string& s) {
    return s == "trace" || s == "debug" || s == "info" || s == "warn" || s == "error";
  }

  // A secret key file: one readable by group or others still loads, with a
  // warning "FILE:LINE: KEY: ... (mode 0644) ..." in `warnings`.
  tunnel::crypto::Key32 key_file(const YAML::Node& map, const std::string& key, const std::string& name,
                                 std::vector<std::string>& warnings) {
    const std::string file = r_.string(map, key, name);
    std::string warning;
    auto k = tunnel::crypto::read_wg_key_file(file, warning);
    if (auto* err = std::get_if<std::string>(&k)) r_.fail(map[key], name, *err);
    if (!warning.empty()) warnings.push_back(located(r_.path(), map[key], name, warning));
    return std::get<tunnel::crypto::Key32>(k);
  }

  PeerAddress address(const YAML::Node& node, const std::string& name, const std::string& text) {
    auto a = parse_address_port(text);
    if (auto* err = std::get_if<std::string>(&a)) r_.fail(node, name, *err);
    return std::get<PeerAddress>(a);
  }

  void tunnel_settings(const YAML::Node& root, GatewayConfig& c) {
    if (root["listen"]) {
      c.tunnel_listen = r_.string(root, "listen", "listen");
      address(root["listen"], "listen", c.tunnel_listen);
    } else if (c.is_hub) {
      r_.fail(root, "listen", "missing (a hub must listen on a known UDP port)");
    }
    // Datagrams start at 1,200 bytes (every path carries them); DPLPMTUD
    // probes up to max_datagram_bytes, which is also the most we accept.
    const auto ceiling = static_cast<ByteCount>(
        r_.integer_or(root, "max_datagram_bytes", "max_datagram_bytes", 1472, 1200, 2000));
    c.endpoint.connection.pmtu_probe_ceiling_bytes = ceiling > 1200 ? ceiling : 0;
    c.endpoint.connection.max_receive_datagram_bytes = ceiling;
    c.endpoint.connection.keep_alive = !c.is_hub;  // the branch keeps its tunnel warm
    // A PING after 5 s of silence, so a dead peer is noticed within
    // SessionTimers::dead_peer_after (15 s) and its clients get resets.
    c.endpoint.connection.keep_alive_interval = ms(5'000);
    cipher(root, c);
  }

  // The data-phase AEAD (tunnel/crypto/aead_offer.h): auto prefers AES-256-GCM
  // when this CPU has AES instructions and the peer's does too.
  void cipher(const YAML::Node& root, GatewayConfig& c) {
    const auto setting = tunnel::crypto::parse_cipher_setting(r_.string_or(root, "cipher", "cipher", "auto"));
    if (!setting) r_.fail(root["cipher"], "cipher", std::string("expected ") + tunnel::crypto::kCipherSettingChoices);
    c.cipher = *setting;
    c.endpoint.aeads = tunnel::crypto::aead_offer(c.cipher, tunnel::crypto::cpu_has_aes_gcm_instructions());
  }

  void peers(const YAML::Node& root, GatewayConfig& c) {
    const YAML::Node list = root["peers"];
    if (!list || !list.IsSequence() || list.size() == 0) r_.fail(root, "peers", "expected a non-empty list");
    if (!c.is_hub && list.size() != 1) r_.fail(list, "peers", "a branch has exactly one hub");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const YAML::Node p = list[i];
      const std::string where = "peers[" + std::to_string(i) + "]";
      r_.only_keys(p, where, {"name", "public_key", "endpoint", "preshared_key_file", "allow"});
      tunnel::session::PeerConfig peer;
      const auto key = tunnel::crypto::parse_wg_key(r_.string(p, "public_key", where + ".public_key"));
      if (!key) {
        r_.fail(p["public_key"], where + ".public_key",
                "not a WireGuard key (44 characters of base64, as `wg pubkey` prints)");
      }
      peer.public_key = *key;
      peer.name = r_.string_or(p, "name", where + ".name", tunnel::crypto::format_wg_key(*key).substr(0, 8));
      for (const auto& other : c.endpoint.peers) {
        if (other.public_key == peer.public_key) r_.fail(p["public_key"], where + ".public_key", "duplicate peer key");
        if (other.name == peer.name) r_.fail(p, where + ".name", "duplicate peer name '" + peer.name + "'");
      }
      if (p["preshared_key_file"]) {
        peer.preshared_key = key_file(p, "preshared_key_file", where + ".preshared_key_file", c.warnings);
      }
      if (p["endpoint"]) {
        peer.endpoint = address(p["endpoint"], where + ".endpoint", r_.string(p, "endpoint", where + ".endpoint"));
      } else if (!c.is_hub) {
        r_.fail(p, where + ".endpoint", "missing (a branch must know where its hub is)");
      }
      PeerPolicy policy;
      policy.name = peer.name;
      if (p["allow"]) {
        if (!c.is_hub) r_.fail(p["allow"], where + ".allow", "only a hub connects to destinations");
        policy.allow = parse_allow_list(r_, p["allow"], where + ".allow");
        // An empty list refuses every connection: an error, not a hub that
        // starts healthy and resets everything. Named at the key's line (an
        // empty value's own mark is the next line's).
        if (policy.allow.empty()) {
          YAML::Node at = p["allow"];
          for (const auto& kv : p) if (kv.first.Scalar() == "allow") at = kv.first;
          r_.fail(at, where + ".allow", "empty: this peer could reach nothing; list its destinations "
                                        "(e.g. [\"10.2.0.0/16:80,443\"]) or remove the peer");
        }
      } else if (c.is_hub) {
        r_.fail(p, where + ".allow", "missing: list the destinations this peer may reach (e.g. [\"10.2.0.0/16:80,443\"])");
      }
      c.endpoint.peers.push_back(peer);
      c.reloadable.peers.push_back(policy);
    }
  }

  void interception(const YAML::Node& n, InterceptionConfig& i) {
    const std::string s = "interception";
    r_.only_keys(n, s, {"mode", "listen", "lan", "ports", "bypass", "reject_quic", "table", "first_bytes_wait_ms"});
    const std::string mode = r_.string_or(n, "mode", s + ".mode", "nftables");
    if (mode == "nftables") i.mode = InterceptionMode::nftables;
    else if (mode == "print") i.mode = InterceptionMode::print;
    else if (mode == "none") i.mode = InterceptionMode::none;
    else r_.fail(n["mode"], s + ".mode", "expected nftables, print or none");
    i.listen = r_.string_or(n, "listen", s + ".listen", i.listen);
    address(n["listen"] ? n["listen"] : n, s + ".listen", i.listen);
    if (n["lan"]) i.lan = prefixes(n["lan"], s + ".lan");
    if (i.lan.empty() && i.mode != InterceptionMode::none) r_.fail(n, s + ".lan", "missing: the client prefixes to intercept");
    if (n["ports"]) {
      const YAML::Node ports = n["ports"];
      std::string text;
      for (const auto& item : r_.strings(ports, s + ".ports")) text += (text.empty() ? "" : ",") + item;
      auto pr = parse_ports(text);
      if (auto* err = std::get_if<std::string>(&pr)) r_.fail(ports, s + ".ports", *err);
      i.ports = std::get<PortRanges>(pr);
    }
    if (n["bypass"]) i.bypass = prefixes(n["bypass"], s + ".bypass");
    i.reject_quic = r_.boolean_or(n, "reject_quic", s + ".reject_quic", false);
    i.table = r_.string_or(n, "table", s + ".table", i.table);
    i.first_bytes_wait_ms = static_cast<std::uint32_t>(
        r_.integer_or(n, "first_bytes_wait_ms", s + ".first_bytes_wait_ms", 10, 0, 1000));
  }

  std::vector<IpPrefix> prefixes(const YAML::Node& list, const std::string& name) {
    std::vector<IpPrefix> out;
    const auto items = r_.strings(list, name);
    for (std::size_t k = 0; k < items.size(); ++k) {
      auto p = parse_ip_prefix(items[k]);
      const YAML::Node at = list.IsSequence() ? list[k] : list;
      if (auto* err = std::get_if<std::string>(&p)) r_.fail(at, name + "[" + std::to_string(k) + "]", *err);
      out.push_back(std::get<IpPrefix>(p));
    }
    return out;
  }

  void ensemble(const YAML::Node& n, congestion::EnsembleConfig& e) {
    // The product's law, chosen from the WAN lab (docs/config.md); the core's
    // default stays NewReno, the papers' law its simulator reproduces.
    e.law = congestion::WindowLawKind::model;
    if (!n) return;
    const std::string s = "ensemble";
    r_.only_keys(n, s, {"key", "coupling", "window_law", "initial_window_packets", "join", "careful_resume",
                        "slow_start", "recovery", "random_loss", "tail_probes", "pacing", "max_rate",
                        "ack_decimation", "queue_bound", "ack_path_window", "thin_stream_copies",
                        "realtime_packet_ms"});
    const std::string key = r_.string_or(n, "key", s + ".key", "peer");
    if (key != "peer") r_.fail(n["key"], s + ".key", "only 'peer' is supported (one ensemble per peer gateway)");
    const std::string coupling = r_.string_or(n, "coupling", s + ".coupling", "single");
    if (coupling == "single") e.coupling = congestion::CouplingMode::single;
    else if (coupling == "n_flows") e.coupling = congestion::CouplingMode::n_flows;
    else if (coupling == "none") e.coupling = congestion::CouplingMode::none;
    else r_.fail(n["coupling"], s + ".coupling", "expected single, n_flows or none");
    const std::string law = r_.string_or(n, "window_law", s + ".window_law", "model");
    if (law == "newreno") e.law = congestion::WindowLawKind::newreno;
    else if (law == "cubic") e.law = congestion::WindowLawKind::cubic;
    else if (law == "model") e.law = congestion::WindowLawKind::model;
    else r_.fail(n["window_law"], s + ".window_law", "expected newreno, cubic or model");
    e.initial_window_packets = static_cast<std::uint32_t>(
        r_.integer_or(n, "initial_window_packets", s + ".initial_window_packets", 10, 1, 100));
    const std::string join = r_.string_or(n, "join", s + ".join", "ack_clocked");
    if (join == "ack_clocked") e.join = congestion::JoinMode::ack_clocked;
    else if (join == "immediate") e.join = congestion::JoinMode::immediate;
    else if (join == "paced") e.join = congestion::JoinMode::paced;
    else r_.fail(n["join"], s + ".join", "expected ack_clocked, immediate or paced");
    e.resume.enabled = r_.boolean_or(n, "careful_resume", s + ".careful_resume", true);
    const std::string slow_start = r_.string_or(n, "slow_start", s + ".slow_start", "standard");
    if (slow_start == "standard") e.slow_start = congestion::SlowStart::standard;
    else if (slow_start == "hystart") e.slow_start = congestion::SlowStart::hystart_pp;
    else r_.fail(n["slow_start"], s + ".slow_start", "expected standard or hystart");
    const std::string recovery = r_.string_or(n, "recovery", s + ".recovery", "gate");
    if (recovery == "gate") e.recovery = congestion::Recovery::gate;
    else if (recovery == "prr") e.recovery = congestion::Recovery::prr;
    else r_.fail(n["recovery"], s + ".recovery", "expected gate or prr");
    const std::string random_loss = r_.string_or(n, "random_loss", s + ".random_loss", "veno");
    if (random_loss == "veno") e.random_loss = congestion::RandomLoss::veno;
    else if (random_loss == "congestion") e.random_loss = congestion::RandomLoss::congestion;
    else r_.fail(n["random_loss"], s + ".random_loss", "expected veno or congestion");
    e.tail_probes = static_cast<std::uint32_t>(r_.integer_or(n, "tail_probes", s + ".tail_probes", 2, 0, 8));
    e.pacing.enabled = r_.boolean_or(n, "pacing", s + ".pacing", congestion::PacingConfig{}.enabled);
    e.ack_path_window = r_.boolean_or(n, "ack_path_window", s + ".ack_path_window", false);
    e.queue_bound = r_.boolean_or(n, "queue_bound", s + ".queue_bound", congestion::EnsembleConfig{}.queue_bound);
    const auto budget_ms = congestion::RealtimePacketsConfig{}.serialisation_budget.count() / 1000;
    e.realtime_packets.serialisation_budget =
        ms(r_.integer_or(n, "realtime_packet_ms", s + ".realtime_packet_ms", budget_ms, 0, 50));
  }

  // ensemble.max_rate: {up, down}, each optional: what this side's WAN
  // carries each way (bits/s). `up` caps what we send; `down` goes to the
  // peer in the handshake and caps what it sends us.
  void max_rate(const YAML::Node& n, tunnel::ConnectionConfig& c) {
    if (!n) return;
    const std::string s = "ensemble.max_rate";
    r_.only_keys(n, s, {"up", "down"});
    c.ensemble.max_rate_bps = bit_rate(n, "up", s + ".up");
    c.max_receive_rate_bps = bit_rate(n, "down", s + ".down");
  }

  // ensemble.ack_decimation: auto (default), true or false. auto: on when
  // max_rate.up says the uplink is scarce (the download's ACKs count against
  // it), else while the ACKs take a measured share of this side's own busy
  // uplink (tunnel/ack_share_meter.h).
  void ack_decimation(const YAML::Node& root, tunnel::ConnectionConfig& c) {
    const bool by_rate = c.ensemble.max_rate_bps != 0;
    c.ack_decimation = by_rate;
    c.ack_decimation_measured = !by_rate;
    if (!root["ensemble"] || !root["ensemble"]["ack_decimation"]) return;
    const YAML::Node n = root["ensemble"]["ack_decimation"];
    const std::string name = "ensemble.ack_decimation";
    const std::string text = n.IsScalar() ? n.Scalar() : "";
    if (text == "true" || text == "false") {
      c.ack_decimation = text == "true";
      c.ack_decimation_measured = false;
    } else if (text != "auto") {
      r_.fail(n, name, "expected true, false or auto");
    }
  }

  std::uint64_t bit_rate(const YAML::Node& map, const std::string& key, const std::string& name) {
    const YAML::Node n = map[key];
    if (!n) return 0;
    if (!n.IsScalar()) r_.fail(n, name, "expected a rate in bits/s such as 950k, 19Mbit or 1.5G");
    auto rate = parse_bit_rate(n.Scalar());
    if (auto* err = std::get_if<std::string>(&rate)) r_.fail(n, name, *err);
    return std::get<std::uint64_t>(rate);
  }

  // auto (the default): learnt in the handshake; true/false override it.
  std::optional<bool> peer_knows_categories(const YAML::Node& s) {
    const YAML::Node n = s["peer_knows_categories"];
    if (!n) return std::nullopt;
    const std::string t = n.IsScalar() ? n.Scalar() : "";
    if (t == "auto") return std::nullopt;
    if (t == "true" || t == "yes" || t == "on") return true;
    if (t == "false" || t == "no" || t == "off") return false;
    r_.fail(n, "scheduler.peer_knows_categories", "expected auto, true or false");
  }

  congestion::SchedulerConfig scheduler(const YAML::Node& n) {
    congestion::SchedulerConfig c;
    if (!n) return c;
    const std::string s = "scheduler";
    r_.only_keys(n, s, {"policy", "tickets", "preempt_class", "realtime_cap", "render_blocking_cap",
                        "peer_knows_categories"});
    const std::string policy = r_.string_or(n, "policy", s + ".policy", "content");
    if (policy == "content") c.policy = congestion::SchedulingPolicy::content;
    else if (policy == "fair") c.policy = congestion::SchedulingPolicy::fair;
    else if (policy == "decay") c.policy = congestion::SchedulingPolicy::decay;
    else if (policy == "preempt") c.policy = congestion::SchedulingPolicy::preempt;
    else r_.fail(n["policy"], s + ".policy", "expected content, fair, decay or preempt");
    if (const YAML::Node t = n["tickets"]) {
      if (!t.IsMap()) r_.fail(t, s + ".tickets", "expected a mapping of class to tickets");
      for (const auto& kv : t) {
        const std::string name = kv.first.as<std::string>();
        const auto cls = content_class_from_string(name);
        if (!cls) {
          r_.fail(kv.first, s + ".tickets." + name,
                  "unknown class (expected one of " + std::string(kContentClassNames) + ")");
        }
        c.class_tickets[static_cast<std::size_t>(*cls)] = static_cast<std::uint32_t>(
            r_.integer_or(t, name, s + ".tickets." + name, 1, 1, 1'000'000));
      }
    }
    if (n["preempt_class"]) {
      const std::string name = r_.string(n, "preempt_class", s + ".preempt_class");
      const auto cls = content_class_from_string(name);
      if (!cls) r_.fail(n["preempt_class"], s + ".preempt_class", "expected one of " + std::string(kContentClassNames));
      c.preempt_class = *cls;
    }
    if (const YAML::Node cap = n["realtime_cap"]) c.realtime_cap_percent = percent(cap, s + ".realtime_cap");
    if (const YAML::Node cap = n["render_blocking_cap"]) {
      c.render_blocking_cap_percent = percent(cap, s + ".render_blocking_cap");
    }
    return c;
  }

  // "30%" or 30: a whole percentage, 0 to 100.
  std::uint32_t percent(const YAML::Node& n, const std::string& name) {
    std::string text = n.IsScalar() ? n.Scalar() : "";
    if (text.ends_with('%')) text.pop_back();
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value > 100) {
      r_.fail(n, name, "expected a percentage from 0% to 100%, such as 30%");
    }
    return value;
  }

  void cache(const YAML::Node& n, GatewayConfig& c) {
    if (!n) return;
    const std::string s = "temporal_cache";
    r_.only_keys(n, s, {"file", "lifetime_s", "capacity", "aging"});
    c.cache_file = r_.string_or(n, "file", s + ".file", "");
    c.cache.lifetime = ms(1000 * r_.integer_or(n, "lifetime_s", s + ".lifetime_s", 600, 0, 86'400));
    c.cache.capacity = static_cast<std::size_t>(r_.integer_or(n, "capacity", s + ".capacity", 1024, 0, 1'000'000));
    const std::string aging = r_.string_or(n, "aging", s + ".aging", "none");
    if (aging == "none") c.cache.aging = congestion::CacheAging::none;
    else if (aging == "halve_per_idle_rto") c.cache.aging = congestion::CacheAging::halve_per_idle_rto;
    else r_.fail(n["aging"], s + ".aging", "expected none or halve_per_idle_rto");
  }

  Limits limits(const YAML::Node& n) {
    Limits l;
    if (!n) return l;
    const std::string s = "limits";
    r_.only_keys(n, s, {"connections_per_peer", "stream_buffer_bytes", "stream_buffer_max_bytes", "memory_bytes", "connect_timeout_ms",
                        "drain_timeout_ms", "connections_per_client", "memory_per_client_bytes", "idle_timeout_ms",
                        "half_closed_timeout_ms", "keepalive_idle_ms", "keepalive_interval_ms",
                        "keepalive_probes"});
    l.connections_per_peer = static_cast<std::uint32_t>(
        r_.integer_or(n, "connections_per_peer", s + ".connections_per_peer", l.connections_per_peer, 1, 1'000'000));
    l.stream_buffer_bytes = static_cast<std::uint64_t>(r_.integer_or(
        n, "stream_buffer_bytes", s + ".stream_buffer_bytes", static_cast<std::int64_t>(l.stream_buffer_bytes),
        16 * 1024, 64 << 20));
    l.stream_buffer_max_bytes = static_cast<std::uint64_t>(r_.integer_or(
        n, "stream_buffer_max_bytes", s + ".stream_buffer_max_bytes",
        static_cast<std::int64_t>(std::max(l.stream_buffer_max_bytes, l.stream_buffer_bytes)),
        static_cast<std::int64_t>(l.stream_buffer_bytes), std::int64_t{1} << 30));
    l.memory_bytes = static_cast<std::uint64_t>(r_.integer_or(n, "memory_bytes", s + ".memory_bytes",
                                                              static_cast<std::int64_t>(l.memory_bytes), 1 << 20,
                                                              std::int64_t{1} << 40));
    l.connect_timeout_ms = static_cast<std::uint32_t>(
        r_.integer_or(n, "connect_timeout_ms", s + ".connect_timeout_ms", l.connect_timeout_ms, 100, 120'000));
    l.drain_timeout_ms = static_cast<std::uint32_t>(
        r_.integer_or(n, "drain_timeout_ms", s + ".drain_timeout_ms", l.drain_timeout_ms, 0, 600'000));
    client_limits(n, l);
    return l;
  }

  // Per-client admission, relay timeouts and keepalive (Limits' comments).
  void client_limits(const YAML::Node& n, Limits& l) {
    const std::string s = "limits";
    const auto u32 = [&](const char* key, std::uint32_t fallback, std::int64_t min, std::int64_t max) {
      return static_cast<std::uint32_t>(r_.integer_or(n, key, s + "." + key, fallback, min, max));
    };
    l.connections_per_client = u32("connections_per_client", l.connections_per_client, 1, 1'000'000);
    l.memory_per_client_bytes = static_cast<std::uint64_t>(
        r_.integer_or(n, "memory_per_client_bytes", s + ".memory_per_client_bytes",
                      static_cast<std::int64_t>(l.memory_per_client_bytes), 64 * 1024, std::int64_t{1} << 40));
    l.idle_timeout_ms = u32("idle_timeout_ms", l.idle_timeout_ms, 0, 604'800'000);
    l.half_closed_timeout_ms = u32("half_closed_timeout_ms", l.half_closed_timeout_ms, 0, 604'800'000);
    l.keepalive_idle_ms = u32("keepalive_idle_ms", l.keepalive_idle_ms, 0, 32'767'000);
    l.keepalive_interval_ms = u32("keepalive_interval_ms", l.keepalive_interval_ms, 1'000, 32'767'000);
    l.keepalive_probes = u32("keepalive_probes", l.keepalive_probes, 1, 127);
    if (l.keepalive_idle_ms > 0 && l.keepalive_idle_ms < 1'000) {
      r_.fail(n["keepalive_idle_ms"], s + ".keepalive_idle_ms", "expected 0 (off) or at least 1000 (the kernel counts seconds)");
    }
  }

  const Reader& r_;
};

}  // namespace

void apply_limits(const Limits& l, tunnel::ConnectionConfig& c) {
  // Connection-wide windows: enough for many busy streams, bounded by memory
  // (64 MiB per RTT: 5 Gbit/s at 100 ms), so fixed at their bound: the
  // admission limits (windows_held, limit_memory) count against it from the
  // start, and what is held is what streams hold.
  const std::uint64_t connection_max = std::min<std::uint64_t>(l.memory_bytes / 4, std::uint64_t{64} << 20);
  c.connection_receive_window_bytes = connection_max;
  c.connection_send_buffer_bytes = connection_max;
  // Per stream: start at stream_buffer_bytes, grow with the path up to
  // stream_buffer_max_bytes, never beyond a quarter of a client's memory
  // limit or of the connection's window (so one stream cannot take it all).
  const std::uint64_t stream_max = std::max<std::uint64_t>(
      l.stream_buffer_bytes,
      std::min({l.stream_buffer_max_bytes, l.memory_per_client_bytes / 4, connection_max / 4}));
  c.stream_receive_window_bytes = l.stream_buffer_bytes;
  c.stream_receive_window_max_bytes = stream_max;
  c.stream_send_buffer_bytes = l.stream_buffer_bytes;
  c.stream_send_buffer_max_bytes = stream_max;
  // Above the admission limit, so a peer beyond it gets a clean reset from
  // the gateway (counted, logged) instead of streams queued for MAX_STREAMS.
  c.max_incoming_streams = std::size_t{l.connections_per_peer} + 1024;
}

std::variant<GatewayConfig, std::string> load_gateway_config(const std::string& path) {
  return load_yaml<GatewayConfig>(path, [](const Reader& r, const YAML::Node& root) { return Loader(r).load(root); });
}

std::variant<GatewayConfig, std::string> parse_gateway_config(const std::string& path, const std::string& text) {
  return parse_yaml<GatewayConfig>(path, text, [](const Reader& r, const YAML::Node& root) { return Loader(r).load(root); });
}

namespace {

// The keys whose values differ between a and b, named as in the file.
void ensemble_changes(const congestion::EnsembleConfig& a, const congestion::EnsembleConfig& b,
                      std::vector<std::string>& out) {
  const std::string s = "ensemble.";
  if (a.coupling != b.coupling) out.push_back(s + "coupling");
  if (a.law != b.law) out.push_back(s + "window_law");
  if (a.initial_window_packets != b.initial_window_packets) out.push_back(s + "initial_window_packets");
  if (a.join != b.join) out.push_back(s + "join");
  if (a.resume.enabled != b.resume.enabled) out.push_back(s + "careful_resume");
  if (a.slow_start != b.slow_start) out.push_back(s + "slow_start");
  if (a.recovery != b.recovery) out.push_back(s + "recovery");
  if (a.random_loss != b.random_loss) out.push_back(s + "random_loss");
  if (a.tail_probes != b.tail_probes) out.push_back(s + "tail_probes");
  if (a.pacing.enabled != b.pacing.enabled) out.push_back(s + "pacing");
  if (a.ack_path_window != b.ack_path_window) out.push_back(s + "ack_path_window");
  if (a.queue_bound != b.queue_bound) out.push_back(s + "queue_bound");
  if (a.realtime_packets.serialisation_budget != b.realtime_packets.serialisation_budget) {
    out.push_back(s + "realtime_packet_ms");
  }
  if (a.max_rate_bps != b.max_rate_bps) out.push_back(s + "max_rate.up");
}

void process_changes(const GatewayConfig& a, const GatewayConfig& b, std::vector<std::string>& out) {
  if (a.is_hub != b.is_hub) out.push_back("role");
  if (a.endpoint.private_key != b.endpoint.private_key) out.push_back("private_key_file");
  if (a.tunnel_listen != b.tunnel_listen) out.push_back("listen");
  if (a.endpoint.connection.max_receive_datagram_bytes != b.endpoint.connection.max_receive_datagram_bytes) {
    out.push_back("max_datagram_bytes");
  }
  // Offered in the next handshake: a restart applies it.
  if (a.endpoint.aeads != b.endpoint.aeads) out.push_back("cipher");
  ensemble_changes(a.endpoint.connection.ensemble, b.endpoint.connection.ensemble, out);
  // Told to the peer in the handshake: the next connection carries it.
  if (a.endpoint.connection.max_receive_rate_bps != b.endpoint.connection.max_receive_rate_bps) {
    out.push_back("ensemble.max_rate.down");
  }
  // `auto` follows max_rate.up, which is named already when it changed.
  if ((a.endpoint.connection.ack_decimation != b.endpoint.connection.ack_decimation ||
       a.endpoint.connection.ack_decimation_measured != b.endpoint.connection.ack_decimation_measured) &&
      a.endpoint.connection.ensemble.max_rate_bps == b.endpoint.connection.ensemble.max_rate_bps) {
    out.push_back("ensemble.ack_decimation");
  }
  if (a.endpoint.connection.thin_stream_copy_loss_ppm != b.endpoint.connection.thin_stream_copy_loss_ppm) {
    out.push_back("ensemble.thin_stream_copies");
  }
  if (a.endpoint.connection.peer_knows_categories_override != b.endpoint.connection.peer_knows_categories_override) {
    out.push_back("scheduler.peer_knows_categories");
  }
  if (a.cache.lifetime != b.cache.lifetime || a.cache.capacity != b.cache.capacity ||
      a.cache.aging != b.cache.aging || a.cache_file != b.cache_file) {
    out.push_back("temporal_cache");
  }
  if (a.metrics_listen != b.metrics_listen) out.push_back("metrics_listen");
  if (a.status_socket != b.status_socket) out.push_back("status_socket");
  if (a.user != b.user) out.push_back("user");
  if (a.handshake_state_file != b.handshake_state_file) out.push_back("handshake_state_file");
  const auto& i = a.interception;
  const auto& j = b.interception;
  if (i.mode != j.mode) out.push_back("interception.mode");
  if (i.listen != j.listen) out.push_back("interception.listen");
  if (i.table != j.table) out.push_back("interception.table");
}

// Peers by public key: the allow list of each running peer from the file's
// peer with its key; a running peer the file no longer has allows nothing.
void match_peers(const GatewayConfig& current, const GatewayConfig& next, ReloadPlan& plan) {
  const auto& now = current.endpoint.peers;
  const auto& file = next.endpoint.peers;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const std::string where = "peers['" + now[i].name + "']";
    const auto it = std::find_if(file.begin(), file.end(), [&](const auto& p) { return p.public_key == now[i].public_key; });
    if (it == file.end()) {
      plan.applied.reloadable.peers[i].allow.clear();
      plan.restart_needed.push_back("peers: '" + now[i].name + "' removed (its new streams are refused meanwhile)");
      continue;
    }
    plan.applied.reloadable.peers[i].allow = next.reloadable.peers[static_cast<std::size_t>(it - file.begin())].allow;
    if (it->name != now[i].name) plan.restart_needed.push_back(where + ".name");
    if (it->endpoint != now[i].endpoint) plan.restart_needed.push_back(where + ".endpoint");
    if (it->preshared_key != now[i].preshared_key) plan.restart_needed.push_back(where + ".preshared_key_file");
  }
  for (const auto& p : file) {
    const bool known = std::any_of(now.begin(), now.end(), [&](const auto& q) { return q.public_key == p.public_key; });
    if (!known) plan.restart_needed.push_back("peers: '" + p.name + "' added");
  }
}

}  // namespace

ReloadPlan plan_reload(const GatewayConfig& current, const GatewayConfig& next) {
  ReloadPlan plan;
  plan.applied = current;
  process_changes(current, next, plan.restart_needed);
  if (!same_udp(current.udp, next.udp)) plan.restart_needed.push_back("udp");
  if (current.is_hub != next.is_hub) return plan;  // nothing of the other role's file applies
  GatewayConfig& a = plan.applied;
  const std::vector<PeerPolicy> running_peers = a.reloadable.peers;
  a.reloadable = next.reloadable;
  a.reloadable.peers = running_peers;  // by the running peers' order, from match_peers
  a.endpoint.connection.ensemble.scheduler = next.reloadable.scheduler;
  match_peers(current, next, plan);
  a.warnings = next.warnings;
  if (!current.is_hub) {
    InterceptionConfig& i = a.interception;
    const InterceptionConfig& j = next.interception;
    plan.interception_changed = i.lan != j.lan || i.ports.ranges != j.ports.ranges || i.bypass != j.bypass ||
                                i.reject_quic != j.reject_quic;
    i.lan = j.lan;
    i.ports = j.ports;
    i.bypass = j.bypass;
    i.reject_quic = j.reject_quic;
    i.first_bytes_wait_ms = j.first_bytes_wait_ms;
  }
  return plan;
}

std::optional<std::string> reload_incompatibility(const GatewayConfig& current, const GatewayConfig& next) {
  const ReloadPlan plan = plan_reload(current, next);
  if (plan.restart_needed.empty()) return std::nullopt;
  std::string out;
  for (const auto& key : plan.restart_needed) out += (out.empty() ? "" : ", ") + key;
  return out;
}

}  // namespace egw::config
