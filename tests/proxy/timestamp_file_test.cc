// The hub's replay memory on disk (proxy/timestamp_file.h): what one run
// stored, the next run loads; a failed write says so and keeps the memory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "proxy/timestamp_file.h"
#include "tunnel/crypto/keys.h"

namespace egw::proxy {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("egw-timestamps-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(TimestampFile, WhatOneRunStoredTheNextLoads) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "handshakes";
  const auto a = tunnel::crypto::x25519_public_key(tunnel::crypto::x25519_generate_private());
  const auto b = tunnel::crypto::x25519_public_key(tunnel::crypto::x25519_generate_private());
  const tunnel::session::Timestamp t1{0x40, 0, 0, 0, 0x65, 1, 2, 3, 0, 0, 0, 9};
  const tunnel::session::Timestamp t2{0x40, 0, 0, 0, 0x65, 1, 2, 4, 0, 0, 0, 1};
  {
    TimestampFile first_run(path);
    EXPECT_FALSE(first_run.load_error());
    EXPECT_FALSE(first_run.load(a));
    ASSERT_TRUE(first_run.store(a, t1));
    ASSERT_TRUE(first_run.store(b, t1));
    ASSERT_TRUE(first_run.store(a, t2));
  }
  TimestampFile second_run(path);
  EXPECT_FALSE(second_run.load_error());
  EXPECT_EQ(second_run.load(a), t2);
  EXPECT_EQ(second_run.load(b), t1);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

TEST(TimestampFile, ACorruptFileIsReportedAndAFailedWriteRefused) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "handshakes") << "not-a-key 0011\n";
  TimestampFile corrupt(dir / "handshakes");
  EXPECT_TRUE(corrupt.load_error());
  const auto a = tunnel::crypto::x25519_public_key(tunnel::crypto::x25519_generate_private());
  TimestampFile unwritable(dir / "missing-dir" / "handshakes");
  EXPECT_FALSE(unwritable.store(a, tunnel::session::Timestamp{}));
  EXPECT_TRUE(unwritable.write_error());
  EXPECT_FALSE(unwritable.load(a)) << "a timestamp that was not persisted is not remembered either";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace egw::proxy
