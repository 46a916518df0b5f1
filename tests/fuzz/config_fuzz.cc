// libFuzzer target: arbitrary bytes as the text of a gateway's YAML config
// (config/gateway_config.h, with its classify: section, config/
// classify_config.h, its allow lists and prefixes, config/net_prefix.h).
// The loader must return a valid config or an error "c.yaml:LINE: ..." whose
// LINE is one of the text's lines; never crash, hang or abort.
// Seeds: tests/fuzz/config_corpus (the examples' shapes and broken ones).
// Their key files are in kKeyDir, written here at start-up.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/gateway_config.h"

using namespace egw::config;

namespace {

// The seeds name these files (private_key_file, preshared_key_file).
constexpr const char* kKeyDir = "/tmp/egw-config-fuzz";
constexpr const char* kPath = "c.yaml";

void write_file(const std::string& name, const std::string& text) {
  // Written aside and renamed: several fuzzing processes may start at once.
  const std::string path = std::string(kKeyDir) + "/" + name;
  const std::string aside = path + "." + std::to_string(::getpid());
  std::FILE* f = std::fopen(aside.c_str(), "w");
  if (f == nullptr) std::abort();
  std::fputs(text.c_str(), f);
  std::fclose(f);
  ::chmod(aside.c_str(), 0600);
  if (std::rename(aside.c_str(), path.c_str()) != 0) std::abort();
}

void check(bool ok) {
  if (!ok) std::abort();
}

// "c.yaml:LINE: what", 1 <= LINE <= the text's lines (+1: the end of the
// last line), and something said after it.
bool well_formed(const std::string& error, const std::string& text) {
  const std::string prefix = std::string(kPath) + ":";
  if (error.rfind(prefix, 0) != 0) return false;
  std::size_t at = prefix.size();
  std::size_t line = 0;
  const std::size_t digits_at = at;
  while (at < error.size() && error[at] >= '0' && error[at] <= '9' && at - digits_at < 9) {
    line = line * 10 + static_cast<std::size_t>(error[at++] - '0');
  }
  std::size_t lines = 1;
  for (const char c : text) lines += c == '\n';
  return at > digits_at && line >= 1 && line <= lines + 1 && error.compare(at, 2, ": ") == 0 && error.size() > at + 2;
}

void check_error(const std::string& error, const std::string& text) {
  if (well_formed(error, text)) return;
  std::fprintf(stderr, "config_fuzz: badly formed error: %s\n", error.c_str());
  std::abort();
}

void check_config(const GatewayConfig& c) {
  check(!c.endpoint.peers.empty() && c.endpoint.peers.size() == c.reloadable.peers.size());
  check(c.is_hub != c.endpoint.initiator);
  if (c.is_hub) check(!c.tunnel_listen.empty());
  // A config is always compatible with itself for a reload.
  check(!reload_incompatibility(c, c));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::mkdir(kKeyDir, 0700);
  // `wg genkey` output: 44 characters of base64 and a newline. Public keys:
  // branch kWvlnvEd3d62lXpcpGxx7io4Fu1mT1Cpy+kx1mY+OGs=, hub HicBMKSldNB7m0NV8hQWCdBUFCQ5GIS8HPTxNM/oLDg=.
  write_file("branch.key", "mDrvFURm53CGwnwelI7gVRnOjOrjOz1qiKCdHY6lQ00=\n");
  write_file("hub.key", "8EmmIr3KPfm/DEVkYcLI+iMNcYx3FYQoeQ0CULb+FHc=\n");
  write_file("psk.key", "OAIdGbj3SJNXMrjwn5y5LcligJNjelALp/kwdzkga1o=\n");
  write_file("bad.key", "not a key\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto result = parse_gateway_config(kPath, text);
  if (const auto* error = std::get_if<std::string>(&result)) {
    check_error(*error, text);
  } else {
    check_config(std::get<GatewayConfig>(result));
  }
  return 0;
}
