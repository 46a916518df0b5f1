#include "tunnel/crypto/wg_key.h"

#include <openssl/crypto.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace egw::tunnel::crypto {
namespace {

constexpr std::size_t kBase64Length = 44;

// Base64 digit value of `c`, or -1, without branches on `c` (the arithmetic
// form of the alphabet A-Z a-z 0-9 + /).
int decode_char(unsigned char c) {
  const int ch = c;
  int value = -1;
  value += (((('A' - 1) - ch) & (ch - ('Z' + 1))) >> 8) & (ch - 64);       // 'A'..'Z' -> 0..25
  value += (((('a' - 1) - ch) & (ch - ('z' + 1))) >> 8) & (ch - 70);       // 'a'..'z' -> 26..51
  value += (((('0' - 1) - ch) & (ch - ('9' + 1))) >> 8) & (ch + 5);        // '0'..'9' -> 52..61
  value += (((('+' - 1) - ch) & (ch - ('+' + 1))) >> 8) & 63;              // '+' -> 62
  value += (((('/' - 1) - ch) & (ch - ('/' + 1))) >> 8) & 64;              // '/' -> 63
  return value;
}

char encode_digit(unsigned int value) {  // value in 0..63
  const int v = static_cast<int>(value);
  int c = v + 'A';
  c += ((25 - v) >> 8) & 6;    // past 'Z': to 'a'
  c -= ((51 - v) >> 8) & 75;   // past 'z': to '0'
  c -= ((61 - v) >> 8) & 15;   // 62 -> '+'
  c += ((62 - v) >> 8) & 3;    // 63 -> '/'
  return static_cast<char>(c);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Key32> parse_wg_key(std::string_view base64) {
  base64 = trim(base64);
  if (base64.size() != kBase64Length || base64[kBase64Length - 1] != '=') return std::nullopt;
  Key32 key{};
  int bad = 0;  // accumulated without early exit
  // 10 groups of 4 digits -> 30 bytes, then 3 digits -> 2 bytes.
  for (std::size_t group = 0; group < 10; ++group) {
    int value = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const int digit = decode_char(static_cast<unsigned char>(base64[group * 4 + i]));
      bad |= digit;  // negative: sign bit set
      value = (value << 6) | (digit & 63);
    }
    key[group * 3 + 0] = static_cast<std::uint8_t>(value >> 16);
    key[group * 3 + 1] = static_cast<std::uint8_t>(value >> 8);
    key[group * 3 + 2] = static_cast<std::uint8_t>(value);
  }
  int value = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const int digit = decode_char(static_cast<unsigned char>(base64[40 + i]));
    bad |= digit;
    value = (value << 6) | (digit & 63);
  }
  // 18 bits carry 16: the last two must be zero (canonical encoding).
  const bool noncanonical = (value & 3) != 0;
  key[30] = static_cast<std::uint8_t>(value >> 10);
  key[31] = static_cast<std::uint8_t>(value >> 2);
  if (bad < 0 || noncanonical) {
    OPENSSL_cleanse(key.data(), key.size());
    return std::nullopt;
  }
  return key;
}

std::string format_wg_key(const Key32& key) {
  std::string out(kBase64Length, '=');
  for (std::size_t group = 0; group < 10; ++group) {
    const unsigned int value = (static_cast<unsigned int>(key[group * 3]) << 16) |
                               (static_cast<unsigned int>(key[group * 3 + 1]) << 8) |
                               key[group * 3 + 2];
    for (std::size_t i = 0; i < 4; ++i) {
      out[group * 4 + i] = encode_digit((value >> (18 - 6 * i)) & 63);
    }
  }
  const unsigned int value = (static_cast<unsigned int>(key[30]) << 10) |
                             (static_cast<unsigned int>(key[31]) << 2);
  for (std::size_t i = 0; i < 3; ++i) out[40 + i] = encode_digit((value >> (12 - 6 * i)) & 63);
  return out;
}

std::variant<Key32, std::string> read_wg_key_file(const std::string& path) {
  std::string ignored;
  return read_wg_key_file(path, ignored);
}

std::variant<Key32, std::string> read_wg_key_file(const std::string& path, std::string& warning) {
  warning.clear();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT) return path + ": no such file";
    return path + ": cannot read: " + std::strerror(error);
  }
  if (!S_ISREG(info.st_mode)) return path + ": not a regular file";
  // A key file is 44 characters and a newline; anything much longer is not one.
  constexpr std::size_t kMaxBytes = 256;
  if (static_cast<std::size_t>(info.st_size) > kMaxBytes) {
    return path + ": not a WireGuard key (" + std::to_string(info.st_size) +
           " bytes; expected 44 base64 characters)";
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return path + ": cannot read: " + std::strerror(errno);
  char buffer[kMaxBytes + 1];
  const std::size_t size = std::fread(buffer, 1, sizeof buffer, file);
  const bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (read_error) {
    OPENSSL_cleanse(buffer, sizeof buffer);
    return path + ": cannot read: I/O error";
  }
  const std::optional<Key32> key = parse_wg_key(std::string_view(buffer, size));
  const std::size_t trimmed = trim(std::string_view(buffer, size)).size();
  OPENSSL_cleanse(buffer, sizeof buffer);
  if (!key) {
    if (trimmed == 0) return path + ": empty (expected a WireGuard key: 44 base64 characters)";
    if (trimmed != kBase64Length) {
      return path + ": not a WireGuard key (" + std::to_string(trimmed) +
             " characters; expected 44 base64 characters)";
    }
    return path + ": not a WireGuard key (not the base64 encoding of 32 bytes)";
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    warning = path + ": group/world-accessible (mode " + mode +
              "); a private key or pre-shared key should be 0600";
  }
  return *key;
}

}  // namespace egw::tunnel::crypto
