// `ensemble-gw check` catches what yaml-cpp lets through: a key given twice
// in one mapping (yaml-cpp keeps both, a lookup sees the first, so an edit
// appended below the old value was silently ignored) and a hub peer whose
// `allow` list is empty (it refuses every connection).
#include "config/gateway_config.h"
#include "config/yaml_reader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace egw::config {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey = "YAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=";
constexpr const char* kPeer = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=";

std::string parse_error(const std::string& text) {
  auto r = parse_yaml<int>("c.yaml", text, [](const Reader&, const YAML::Node&) { return 0; });
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(parsed)";
}

TEST(YamlDuplicateKeys, TopLevelKeyNamedWithBothLines) {
  EXPECT_EQ(parse_error("role: hub\nlog_level: info\nlog_level: debug\n"),
            "c.yaml:3: log_level: duplicate key (first at line 2)");
}

TEST(YamlDuplicateKeys, NestedInMapsAndLists) {
  EXPECT_EQ(parse_error("limits:\n  memory_bytes: 1\n  drain_timeout_ms: 2\n  memory_bytes: 3\n"),
            "c.yaml:4: limits.memory_bytes: duplicate key (first at line 2)");
  EXPECT_EQ(parse_error("peers:\n  - name: a\n  - name: b\n    allow: [x]\n    name: c\n"),
            "c.yaml:5: peers[1].name: duplicate key (first at line 3)");
  EXPECT_EQ(parse_error("scheduler: {tickets: {html: 1, html: 2}}\n"),
            "c.yaml:1: scheduler.tickets.html: duplicate key (first at line 1)");
}

TEST(YamlDuplicateKeys, SameKeyInSiblingMapsIsFine) {
  EXPECT_EQ(parse_error("peers:\n  - name: a\n  - name: b\nlimits: {name: 1}\n"), "(parsed)");
  EXPECT_EQ(parse_error(""), "(parsed)");
}

TEST(YamlDuplicateKeys, AliasFanOutIsWalkedOnce) {
  // 2^40 paths through the aliases, 40 distinct nodes: the scan must not
  // walk every path (it would not finish).
  std::string text = "a0: &a0 {k: 1}\n";
  for (int i = 1; i <= 40; ++i) {
    const std::string prev = "a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*" + prev + ", *" + prev + "]\n";
  }
  EXPECT_EQ(parse_error(text), "(parsed)");
  EXPECT_EQ(parse_error(text + "a3: 1\n"), "c.yaml:42: a3: duplicate key (first at line 4)");
}

class HubAllowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("egw-yaml-checks-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "key") << kKey << "\n";
    fs::permissions(dir_ / "key", fs::perms::owner_read | fs::perms::owner_write);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string hub_error(const std::string& peer_lines) {
    const std::string text = "role: hub\nprivate_key_file: " + (dir_ / "key").string() +
                             "\nlisten: 0.0.0.0:51900\npeers:\n  - name: b1\n    public_key: " + kPeer + "\n" +
                             peer_lines + "log_level: info\n";
    auto r = parse_gateway_config("hub.yaml", text);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(loaded)";
  }

  fs::path dir_;
};

TEST_F(HubAllowTest, EmptyListIsAnErrorAtTheKeysLine) {
  const std::string what =
      "peers[0].allow: empty: this peer could reach nothing; list its destinations "
      "(e.g. [\"10.2.0.0/16:80,443\"]) or remove the peer";
  EXPECT_EQ(hub_error("    allow: []\n"), "hub.yaml:7: " + what);
  EXPECT_EQ(hub_error("    allow:\n"), "hub.yaml:7: " + what);
  EXPECT_EQ(hub_error("    allow: ~\n"), "hub.yaml:7: " + what);
}

TEST_F(HubAllowTest, NonEmptyListLoads) { EXPECT_EQ(hub_error("    allow: [10.2.0.0/16]\n"), "(loaded)"); }

TEST_F(HubAllowTest, DuplicateKeyInAPeer) {
  EXPECT_EQ(hub_error("    allow: [10.2.0.0/16]\n    allow: [\"*\"]\n"),
            "hub.yaml:8: peers[0].allow: duplicate key (first at line 7)");
}

}  // namespace
}  // namespace egw::config
