// common/atomic_file: lives in common/, tested here with the cache it persists.
#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace egw {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp per test, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/egw-atomic-file-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Every entry of the directory, to catch leftover temporary files.
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WriteThenReadRoundTrips) {
  const fs::path p = dir_ / "cache.txt";
  const std::string contents("line one\nbinary \0\xff bytes\n", 26);
  std::string error;
  ASSERT_TRUE(write_file_atomically(p, contents, &error)) << error;
  auto back = read_file(p, &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(*back, contents);
  EXPECT_EQ(entries(), 1u);  // the temporary file was renamed, not left behind
  // Owner-only: cached path state is nobody else's business.
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(AtomicFileTest, OverwriteReplacesTheWholeFile) {
  const fs::path p = dir_ / "f";
  ASSERT_TRUE(write_file_atomically(p, std::string(1000, 'a'), nullptr));
  ASSERT_TRUE(write_file_atomically(p, "short", nullptr));
  EXPECT_EQ(read_file(p, nullptr).value_or("?"), "short");
  ASSERT_TRUE(write_file_atomically(p, "", nullptr));
  EXPECT_EQ(read_file(p, nullptr).value_or("?"), "");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, FailedRenameKeepsTheTargetAndRemovesTheTemporary) {
  // The target is a non-empty directory: rename(2) over it fails.
  const fs::path p = dir_ / "busy";
  fs::create_directory(p);
  { std::ofstream(p / "inside") << "x"; }
  std::string error;
  EXPECT_FALSE(write_file_atomically(p, "new", &error));
  EXPECT_NE(error.find("busy"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_directory(p));
  EXPECT_EQ(entries(), 1u);  // only "busy": no temporary file left
}

TEST_F(AtomicFileTest, WriteIntoMissingDirectoryFails) {
  std::string error;
  EXPECT_FALSE(write_file_atomically(dir_ / "no" / "such" / "f", "x", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(entries(), 0u);
}

TEST_F(AtomicFileTest, ReadMissingFileOrDirectoryFailsWithAReason) {
  std::string error;
  EXPECT_FALSE(read_file(dir_ / "missing", &error).has_value());
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(read_file(dir_, &error).has_value());
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(read_file(dir_ / "missing", nullptr).has_value());  // null error is fine
}

TEST_F(AtomicFileTest, ReadEnforcesTheSizeCap) {
  const fs::path p = dir_ / "big";
  ASSERT_TRUE(write_file_atomically(p, std::string(100'000, 'z'), nullptr));
  std::string error;
  // Exactly the cap is allowed; one byte under it is not (the file is 100000 bytes).
  EXPECT_EQ(read_file(p, &error, 100'000).value_or("").size(), 100'000u);
  EXPECT_FALSE(read_file(p, &error, 99'999).has_value());
  EXPECT_NE(error.find("larger than 99999"), std::string::npos) << error;
}

}  // namespace
}  // namespace egw
