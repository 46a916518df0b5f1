#include "proxy/timestamp_file.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "common/atomic_file.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::proxy {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string to_hex(const tunnel::session::Timestamp& t) {
  std::string out;
  for (const std::uint8_t b : t) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::optional<tunnel::session::Timestamp> from_hex(std::string_view text) {
  tunnel::session::Timestamp t{};
  if (text.size() != 2 * t.size()) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    t[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return t;
}

}  // namespace

TimestampFile::TimestampFile(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;  // first run: nothing accepted yet
  std::string error;
  const auto text = read_file(path_, &error, 1 << 20);
  if (!text) {
    load_error_ = error;
    return;
  }
  std::istringstream in(*text);
  std::string key, stamp;
  int line = 0;
  while (in >> key >> stamp) {
    ++line;
    const auto k = tunnel::crypto::parse_wg_key(key);
    const auto t = from_hex(stamp);
    if (!k || !t) {
      load_error_ = "line " + std::to_string(line) + ": expected '<public key> <24 hex digits>'";
      continue;
    }
    greatest_[*k] = std::max(greatest_[*k], *t);
  }
}

std::optional<tunnel::session::Timestamp> TimestampFile::load(const tunnel::crypto::Key32& peer) {
  const auto it = greatest_.find(peer);
  if (it == greatest_.end()) return std::nullopt;
  return it->second;
}

bool TimestampFile::store(const tunnel::crypto::Key32& peer, const tunnel::session::Timestamp& timestamp) {
  auto next = greatest_;
  next[peer] = timestamp;
  std::string text;
  for (const auto& [k, t] : next) text += tunnel::crypto::format_wg_key(k) + " " + to_hex(t) + "\n";
  std::string error;
  if (!write_file_atomically(path_, text, &error)) {
    write_error_ = error;
    spdlog::error("handshake state {}: {}; the initiation is not answered", path_.string(), error);
    return false;
  }
  greatest_ = std::move(next);
  write_error_.reset();
  return true;
}

}  // namespace egw::proxy
