// The classification corpus (tests/data/classify/): real clients' first
// bytes for the host names of hosts.tsv, made by capture.py there. Each file
// is one kind of client; each line one capture:
//   HOST <TAB> ALPN offered, comma-separated <TAB> HEX[,HEX...]
// (HEX: the TLS stream up to the end of the ClientHello, or one UDP datagram).
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace egw::proxy::test_data {

#ifdef EGW_CLASSIFY_DATA_DIR
inline constexpr const char* kClassifyDataDir = EGW_CLASSIFY_DATA_DIR;
#endif

inline constexpr const char* kTlsCorpusFiles[] = {"tls_openssl.txt", "tls_curl.txt"};
inline constexpr const char* kQuicCorpusFiles[] = {"quic_aioquic.txt", "quic_chrome.txt"};

struct Capture {
  std::string host;
  std::vector<std::string> alpn;
  std::vector<std::vector<std::byte>> datagrams;  // TLS: one, the stream's bytes
};

inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = text.find(separator, at);
    parts.emplace_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

inline std::vector<std::byte> hex_bytes(std::string_view hex) {
  std::vector<std::byte> out;
  const auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

// The captures of one file (empty if it cannot be read).
inline std::vector<Capture> load_corpus(const std::string& path) {
  std::vector<Capture> captures;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto fields = split(line, '\t');
    if (fields.size() != 3) continue;
    Capture c{fields[0], split(fields[1], ','), {}};
    for (const auto& hex : split(fields[2], ',')) c.datagrams.push_back(hex_bytes(hex));
    captures.push_back(std::move(c));
  }
  return captures;
}

// hosts.tsv: the host names (first column).
inline std::vector<std::string> load_hosts(const std::string& path) {
  std::vector<std::string> hosts;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    hosts.push_back(split(line, '\t')[0]);
  }
  return hosts;
}

}  // namespace egw::proxy::test_data
