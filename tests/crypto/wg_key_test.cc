// WireGuard key format: parse/format, against `wg genkey` / `wg pubkey` when
// the wireguard-tools are installed, and key files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::tunnel::crypto {
namespace {

using test::to_hex;

// Runs a shell command, returns its stdout (nullopt if it failed).
std::optional<std::string> run(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[256];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

bool have_wg() { return std::system("command -v wg >/dev/null 2>&1") == 0; }

// A fresh temporary directory for key files, removed afterwards.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/egw-wg-key-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string& name, const std::string& content, mode_t mode) const {
    const std::string path = path_ + "/" + name;
    std::ofstream(path) << content;
    ::chmod(path.c_str(), mode);
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CryptoWgKey, KnownKeyRoundTrips) {
  // RFC 7748 §6.1 Alice's public key in WireGuard form (base64 of the bytes).
  const Key32 key = test::key_from_hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  EXPECT_EQ(format_wg_key(key), "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=");
  EXPECT_EQ(parse_wg_key("hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo="), key);
  EXPECT_EQ(parse_wg_key("  hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n"), key);
  EXPECT_EQ(parse_wg_key("\thSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\r\n"), key);
  // Every byte value and every digit (+ and / included) through a round trip.
  for (int start = 0; start < 256; start += 32) {
    Key32 k;
    for (int i = 0; i < 32; ++i) k[i] = static_cast<std::uint8_t>(start + i);
    EXPECT_EQ(parse_wg_key(format_wg_key(k)), k);
  }
  Key32 ones;
  ones.fill(0xff);
  EXPECT_EQ(format_wg_key(ones), "//////////////////////////////////////////8=");
  EXPECT_EQ(format_wg_key(Key32{}), "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
}

TEST(CryptoWgKey, BadKeysRejected) {
  const std::string good = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";
  EXPECT_FALSE(parse_wg_key(""));
  EXPECT_FALSE(parse_wg_key("   \n"));
  EXPECT_FALSE(parse_wg_key(good.substr(0, 43)));          // too short
  EXPECT_FALSE(parse_wg_key(good + "="));                  // too long
  EXPECT_FALSE(parse_wg_key("A" + good));                  // too long
  EXPECT_FALSE(parse_wg_key(good.substr(0, 43) + "A"));    // no padding
  EXPECT_FALSE(parse_wg_key(good.substr(0, 42) + "=="));   // 31 bytes
  EXPECT_FALSE(parse_wg_key("hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmp="));  // non-canonical
  EXPECT_FALSE(parse_wg_key("hSDwCYkwp1R0i33c D73Wg2/Og0mOBr066SpjqqbTmo="));  // inner space
  for (const char bad : {'-', '_', '.', '!', '=', '\0', '\x80', '\xff', '@', '[', '`', '{'}) {
    std::string key = good;
    key[10] = bad;
    EXPECT_FALSE(parse_wg_key(key)) << int(bad);
  }
  // Base64 of 33 bytes is 44 characters without padding: not a key either.
  EXPECT_FALSE(parse_wg_key("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
}

TEST(CryptoWgKey, MatchesWgGenkeyAndPubkey) {
  if (!have_wg()) GTEST_SKIP() << "wg (wireguard-tools) not installed";
  for (int i = 0; i < 5; ++i) {
    const auto private_text = run("wg genkey");
    ASSERT_TRUE(private_text);
    const auto public_text = run("printf '%s' '" + *private_text + "' | wg pubkey");
    ASSERT_TRUE(public_text);
    const auto private_key = parse_wg_key(*private_text);
    const auto public_key = parse_wg_key(*public_text);
    ASSERT_TRUE(private_key) << *private_text;
    ASSERT_TRUE(public_key) << *public_text;
    EXPECT_EQ(x25519_public_key(*private_key), *public_key);
    EXPECT_EQ(format_wg_key(*private_key) + "\n", *private_text);
    EXPECT_EQ(format_wg_key(*public_key) + "\n", *public_text);
  }
  // And the other way: `wg pubkey` of our generated key.
  const std::string ours = format_wg_key(x25519_generate_private());
  const auto theirs = run("printf '%s\\n' '" + ours + "' | wg pubkey");
  ASSERT_TRUE(theirs);
  EXPECT_EQ(parse_wg_key(*theirs), x25519_public_key(*parse_wg_key(ours)));
  const auto psk = run("wg genpsk");
  ASSERT_TRUE(psk);
  EXPECT_TRUE(parse_wg_key(*psk));
}

TEST(CryptoWgKey, KeyFiles) {
  TempDir dir;
  const std::string good = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n";
  const std::string private_file = dir.file("key.priv", good, 0600);
  std::string warning = "stale";
  const auto key = read_wg_key_file(private_file, warning);
  ASSERT_TRUE(std::holds_alternative<Key32>(key)) << std::get<std::string>(key);
  EXPECT_EQ(std::get<Key32>(key), *parse_wg_key(good));
  EXPECT_EQ(warning, "");
  EXPECT_TRUE(std::holds_alternative<Key32>(read_wg_key_file(private_file)));

  const std::string readable = dir.file("key.pub", good, 0644);
  const auto public_key = read_wg_key_file(readable, warning);
  EXPECT_TRUE(std::holds_alternative<Key32>(public_key));  // a warning, not an error
  EXPECT_NE(warning.find("key.pub"), std::string::npos) << warning;
  EXPECT_NE(warning.find("0644"), std::string::npos) << warning;

  auto error = [](const std::variant<Key32, std::string>& result) {
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
  };
  const std::string missing = dir.path() + "/missing.key";
  EXPECT_EQ(error(read_wg_key_file(missing)), missing + ": no such file");
  const std::string empty = dir.file("empty.key", "", 0600);
  EXPECT_NE(error(read_wg_key_file(empty)).find("empty.key: empty"), std::string::npos);
  const std::string short_key = dir.file("short.key", good.substr(0, 20), 0600);
  EXPECT_NE(error(read_wg_key_file(short_key)).find("short.key: not a WireGuard key (20 characters"),
            std::string::npos)
      << error(read_wg_key_file(short_key));
  const std::string garbage = dir.file("bad.key", std::string(44, '!'), 0600);
  EXPECT_NE(error(read_wg_key_file(garbage)).find("bad.key: not a WireGuard key"), std::string::npos);
  const std::string big = dir.file("big.key", std::string(10000, 'A'), 0600);
  EXPECT_NE(error(read_wg_key_file(big)).find("big.key: not a WireGuard key"), std::string::npos);
  EXPECT_NE(error(read_wg_key_file(dir.path())).find("not a regular file"), std::string::npos);
  if (::geteuid() != 0) {  // root reads anything
    const std::string unreadable = dir.file("unreadable.key", good, 0000);
    EXPECT_NE(error(read_wg_key_file(unreadable)).find("unreadable.key: cannot read"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace egw::tunnel::crypto
