#include "proxy/tunnel_config.h"

#include "config/yaml_reader.h"


#include "proxy/tunnel_socket.h"
#include "tunnel/crypto/cpu_features.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::proxy {
namespace {

using Key32 = tunnel::crypto::Key32;
using config::Reader;

Key32 key_file(const Reader& r, const YAML::Node& map, const std::string& key, const std::string& name) {
  const std::string file = r.string(map, key, name);
  auto k = tunnel::crypto::read_wg_key_file(file);
  if (auto* err = std::get_if<std::string>(&k)) r.fail(map[key], name, *err);
  return std::get<Key32>(k);
}

}  // namespace

std::variant<boost::asio::ip::udp::endpoint, std::string> parse_udp_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return "expected HOST:PORT, got '" + text + "'";
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = 0;
  try {
    port = std::stoi(text.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (port < 0 || port > 65535) return "bad port in '" + text + "'";
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return "bad IP address '" + host + "' (names are not resolved)";
  return boost::asio::ip::udp::endpoint(address, static_cast<unsigned short>(port));
}

std::variant<TunnelConfig, std::string> load_tunnel_config(const std::string& path) {
  return config::load_yaml<TunnelConfig>(path, [](const Reader& r, const YAML::Node& root) {
    r.only_keys(root, "", {"role", "private_key_file", "listen", "max_datagram_bytes", "cipher", "peers"});
    TunnelConfig c;
    const std::string role = r.string(root, "role", "role");
    if (role != "branch" && role != "hub") r.fail(root["role"], "role", "expected 'branch' or 'hub'");
    c.is_hub = role == "hub";
    c.endpoint.initiator = !c.is_hub;
    c.endpoint.private_key = key_file(r, root, "private_key_file", "private_key_file");
    if (root["listen"]) {
      auto e = parse_udp_endpoint(r.string(root, "listen", "listen"));
      if (auto* err = std::get_if<std::string>(&e)) r.fail(root["listen"], "listen", *err);
      c.listen = std::get<boost::asio::ip::udp::endpoint>(e);
    } else if (c.is_hub) {
      r.fail(root, "listen", "missing (a hub must listen on a known port)");
    }
    // The data AEAD, as the gateway's config has it (docs/config.md).
    const auto cipher = tunnel::crypto::parse_cipher_setting(r.string_or(root, "cipher", "cipher", "auto"));
    if (!cipher) r.fail(root["cipher"], "cipher", std::string("expected ") + tunnel::crypto::kCipherSettingChoices);
    c.endpoint.aeads = tunnel::crypto::aead_offer(*cipher, tunnel::crypto::cpu_has_aes_gcm_instructions());
    // Datagrams start at 1,200 bytes (every path carries them) and DPLPMTUD
    // probes up to max_datagram_bytes, which is also the most we accept.
    ByteCount ceiling = 1472;  // UDP payload of a 1500-byte IPv4 path
    if (root["max_datagram_bytes"]) {
      const auto n = root["max_datagram_bytes"].as<long>(0);
      if (n < 1200 || n > 2000) r.fail(root["max_datagram_bytes"], "max_datagram_bytes", "expected 1200..2000");
      ceiling = static_cast<ByteCount>(n);
    }
    c.endpoint.connection.pmtu_probe_ceiling_bytes = ceiling > 1200 ? ceiling : 0;
    c.endpoint.connection.max_receive_datagram_bytes = ceiling;
    const YAML::Node peers = root["peers"];
    if (!peers || !peers.IsSequence() || peers.size() == 0) r.fail(root, "peers", "expected a non-empty list");
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const YAML::Node p = peers[i];
      const std::string where = "peers[" + std::to_string(i) + "]";
      r.only_keys(p, where, {"name", "public_key", "endpoint", "preshared_key_file"});
      tunnel::session::PeerConfig peer;
      const auto key = tunnel::crypto::parse_wg_key(r.string(p, "public_key", where + ".public_key"));
      if (!key) r.fail(p["public_key"], where + ".public_key", "not a WireGuard key (44 characters of base64, as `wg pubkey` prints)");
      peer.public_key = *key;
      peer.name = p["name"] ? r.string(p, "name", where + ".name") : tunnel::crypto::format_wg_key(*key).substr(0, 8);
      if (p["preshared_key_file"]) peer.preshared_key = key_file(r, p, "preshared_key_file", where + ".preshared_key_file");
      if (p["endpoint"]) {
        auto e = parse_udp_endpoint(r.string(p, "endpoint", where + ".endpoint"));
        if (auto* err = std::get_if<std::string>(&e)) r.fail(p["endpoint"], where + ".endpoint", *err);
        peer.endpoint = to_peer_address(std::get<boost::asio::ip::udp::endpoint>(e));
      } else if (!c.is_hub) {
        r.fail(p, where + ".endpoint", "missing (a branch must know where its hub is)");
      }
      c.endpoint.peers.push_back(peer);
    }
    if (!root["listen"]) {  // a branch: any port, the family of its first peer
      const bool v4 = c.endpoint.peers.front().endpoint->is_v4();
      c.listen = boost::asio::ip::udp::endpoint(v4 ? boost::asio::ip::udp::v4() : boost::asio::ip::udp::v6(), 0);
    }
    return c;
  });
}

}  // namespace egw::proxy
