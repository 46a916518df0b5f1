// NftTable through libnftables' JSON input: Debian's libnftables 1.0.6 is
// built with JSON support, and a JSON document needs no quoting of our values
// in nft's grammar. Each call is one nft_run_cmd_from_buffer(): one netlink
// batch, so the kernel applies all of it or none.
#include "proxy/nft_table.h"

#include <nftables/libnftables.h>

#include <memory>
#include <sstream>

namespace egw::proxy {
namespace {

// nft's identifiers allow more, but these need no quoting in the printed script.
std::optional<std::string> check_table_name(const std::string& name) {
  bool valid = !name.empty() && name.size() <= 255;
  for (std::size_t i = 0; valid && i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    valid = letter || (i > 0 && c >= '0' && c <= '9');
  }
  if (valid) return std::nullopt;
  return "nftables table name '" + name + "' is not [A-Za-z_][A-Za-z0-9_]*";
}

// libnftables' error text, one line per message ("netlink: Error: cache
// initialization failed: Operation not permitted"), down to the reasons.
// (On EPERM the library also prints "... (you must be root)" to stderr itself.)
std::string describe(const char* errors) {
  std::string text = errors ? errors : "";
  if (text.find("Operation not permitted") != std::string::npos) {
    return "nftables: Operation not permitted (need CAP_NET_ADMIN)";
  }
  std::istringstream lines(text);
  std::string line, out;
  while (std::getline(lines, line)) {
    if (const auto error = line.find("Error: "); error != std::string::npos) line.erase(0, error + 7);
    if (line.empty()) continue;
    out += (out.empty() ? "" : "; ") + line;
  }
  return "nftables: " + (out.empty() ? std::string("failed") : out);
}

// Runs one JSON document; nullopt on success. Output (listings) is discarded.
std::optional<std::string> run(const std::string& json) {
  const std::unique_ptr<nft_ctx, decltype(&nft_ctx_free)> ctx(nft_ctx_new(NFT_CTX_DEFAULT), nft_ctx_free);
  if (!ctx) return "nftables: cannot create a libnftables context";
  // The JSON output flag is also what makes the input parsed as JSON.
  nft_ctx_output_set_flags(ctx.get(), NFT_CTX_OUTPUT_JSON);
  nft_ctx_buffer_output(ctx.get());
  nft_ctx_buffer_error(ctx.get());
  if (nft_run_cmd_from_buffer(ctx.get(), json.c_str()) == 0) return std::nullopt;
  return describe(nft_ctx_get_error_buffer(ctx.get()));
}

std::string table_object(const std::string& table) {
  return "{\"table\":{\"family\":\"inet\",\"name\":\"" + table + "\"}}";
}

}  // namespace

std::optional<std::string> check_rules(const InterceptionRules& r) {
  if (auto error = check_table_name(r.table)) return error;
  if (r.lan.empty()) return "no LAN prefix to intercept";
  if (r.redirect_port == 0) return "no port to redirect to";
  for (const auto& [lo, hi] : r.ports.ranges) {
    if (lo == 0 || lo > hi) return "bad port range " + std::to_string(lo) + "-" + std::to_string(hi);
  }
  return std::nullopt;
}

std::optional<std::string> NftTable::install(const InterceptionRules& rules) {
  if (auto error = check_rules(rules)) return error;
  return run(render_nft_json(rules));
}

std::optional<std::string> NftTable::stop_new(const std::string& table) {
  if (auto error = check_table_name(table)) return error;
  return run(render_nft_stop_new_json(table));
}

std::optional<std::string> NftTable::remove(const std::string& table) {
  if (auto error = check_table_name(table)) return error;
  // Add, then delete: one batch that succeeds whether or not the table was there.
  return run("{\"nftables\":[{\"add\":" + table_object(table) + "},{\"delete\":" + table_object(table) + "}]}");
}

bool NftTable::exists(const std::string& table) {
  return !check_table_name(table) && !run("{\"nftables\":[{\"list\":" + table_object(table) + "}]}");
}

}  // namespace egw::proxy
