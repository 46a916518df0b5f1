// The classify: section and the hub's allow lists, read from real files so
// that error messages carry the file, the line and the full key.
#include "config/classify_config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <variant>

#include <gtest/gtest.h>

namespace egw::config {
namespace {

using C = ContentClass;

class ClassifyConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("egw-classify-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& yaml) {
    const auto file = (dir_ / "gw.yaml").string();
    std::ofstream(file) << yaml;
    return file;
  }
  // The parsed section, or the error message.
  std::variant<ClassifyConfig, std::string> classify(const std::string& yaml) {
    const std::string file = write(yaml);
    Reader r(file);
    try {
      const YAML::Node root = YAML::LoadFile(file);
      return parse_classify(r, root["classify"]);
    } catch (const ConfigError& e) {
      return e.message;
    }
  }
  std::variant<std::vector<DestinationRule>, std::string> allow(const std::string& yaml) {
    const std::string file = write(yaml);
    Reader r(file);
    try {
      const YAML::Node root = YAML::LoadFile(file);
      return parse_allow_list(r, root["peers"][0]["allow"], "peers[0].allow");
    } catch (const ConfigError& e) {
      return e.message;
    }
  }
  std::string error(const std::string& yaml) {
    auto result = classify(yaml);
    if (std::holds_alternative<ClassifyConfig>(result)) return "(no error)";
    return std::get<std::string>(result);
  }

  std::filesystem::path dir_;
};

TEST_F(ClassifyConfigTest, AbsentOrEmptySectionGivesTheDefaults) {
  for (const std::string yaml : {"role: hub\n", "classify:\n", "classify: {}\n"}) {
    const auto c = std::get<ClassifyConfig>(classify(yaml));
    EXPECT_EQ(c.default_class, C::bulk);
    EXPECT_EQ(c.content_types, ClassifyConfig::default_content_types());
    EXPECT_TRUE(c.sni.empty());
    EXPECT_TRUE(c.destinations.empty());
  }
  const auto defaults = ClassifyConfig::default_content_types();
  ASSERT_EQ(defaults.size(), 9u);
  EXPECT_EQ(defaults.front(), std::pair(std::string("text/html"), C::html));
  EXPECT_EQ(defaults.back(), std::pair(std::string("image/*"), C::image));
}

TEST_F(ClassifyConfigTest, FullSectionInDocumentOrder) {
  const auto c = std::get<ClassifyConfig>(classify(
      "classify:\n"
      "  default: script\n"
      "  content_types:\n"
      "    bulk: [image/SVG+xml]\n"          // before image/*: first match wins
      "    image: [\"image/*\"]\n"
      "    html: text/html\n"                // a single scalar is a list of one
      "  sni: { image: [\"*.CDN.example.com\", img.example.com], html: [www.example.com] }\n"
      "  destinations:\n"
      "    bulk: [\"10.2.0.0/16:21,22\", \"[2001:db8::]/32\"]\n"
      "    html: [\"*:8080\"]\n"));
  EXPECT_EQ(c.default_class, C::script);
  const std::vector<std::pair<std::string, C>> types = {
      {"image/svg+xml", C::bulk}, {"image/*", C::image}, {"text/html", C::html}};
  EXPECT_EQ(c.content_types, types);
  const std::vector<std::pair<std::string, C>> sni = {
      {"*.cdn.example.com", C::image}, {"img.example.com", C::image}, {"www.example.com", C::html}};
  EXPECT_EQ(c.sni, sni);
  ASSERT_EQ(c.destinations.size(), 3u);
  EXPECT_EQ(c.destinations[0].first.to_string(), "10.2.0.0/16:21,22");
  EXPECT_EQ(c.destinations[0].second, C::bulk);
  EXPECT_EQ(c.destinations[1].first.to_string(), "[2001:db8::]/32");
  EXPECT_EQ(c.destinations[2].first.to_string(), "*:8080");
  EXPECT_EQ(c.destinations[2].second, C::html);
}

TEST_F(ClassifyConfigTest, EmptyContentTypesReplaceTheDefaults) {
  const auto c = std::get<ClassifyConfig>(classify("classify:\n  content_types: {}\n"));
  EXPECT_TRUE(c.content_types.empty());
}

TEST_F(ClassifyConfigTest, ErrorsNameFileLineAndKey) {
  const std::string file = (dir_ / "gw.yaml").string();
  EXPECT_EQ(error("classify:\n"
                  "  sni:\n"
                  "    image: [ok.example.com, \"bad host!\"]\n"),
            file + ":3: classify.sni.image[1]: bad host name pattern 'bad host!' (expected www.example.com or *.example.com)");
  EXPECT_EQ(error("classify:\n"
                  "  destinations:\n"
                  "    bulk:\n"
                  "      - 10.0.0.0/8\n"
                  "      - 10.1.2.3/16\n"),
            file + ":5: classify.destinations.bulk[1]: host bits set in '10.1.2.3/16' (did you mean 10.1.0.0/16?)");
  EXPECT_EQ(error("classify:\n  default: video\n"),
            file + ":2: classify.default: unknown class 'video' (expected one of html, script, image, bulk, realtime, interactive, web, streaming)");
}

TEST_F(ClassifyConfigTest, UnknownKeysAndClassesAreErrors) {
  EXPECT_NE(error("classify:\n  defualt: html\n").find(":2: classify.defualt: unknown key"), std::string::npos);
  EXPECT_NE(error("classify:\n  sni:\n    video: [a.example.com]\n").find(":3: classify.sni.video: unknown class 'video'"),
            std::string::npos);
  EXPECT_NE(error("classify:\n  content_types:\n    Html: [text/html]\n").find("classify.content_types.Html: unknown class"),
            std::string::npos);
}

TEST_F(ClassifyConfigTest, BadShapesAreErrors) {
  EXPECT_NE(error("classify: [html]\n").find("classify: expected a mapping"), std::string::npos);
  EXPECT_NE(error("classify:\n  sni: [a.example.com]\n").find(":2: classify.sni: expected a mapping"), std::string::npos);
  EXPECT_NE(error("classify:\n  sni:\n    html:\n").find("classify.sni.html: expected a list"), std::string::npos);
  EXPECT_NE(error("classify:\n  sni:\n    html: [[a.example.com]]\n").find("classify.sni.html[0]: expected a string"),
            std::string::npos);
}

TEST_F(ClassifyConfigTest, MediaTypesAreValidated) {
  EXPECT_NE(error("classify:\n  content_types:\n    html: [\"text/html; charset=utf-8\"]\n")
                .find(":3: classify.content_types.html[0]: bad media type"),
            std::string::npos);
  EXPECT_NE(error("classify:\n  content_types:\n    bulk: [\"*/*\"]\n").find("bad media type '*/*'"), std::string::npos);
  EXPECT_NE(error("classify:\n  content_types:\n    bulk: [text]\n").find("bad media type 'text'"), std::string::npos);
  EXPECT_NE(error("classify:\n  content_types:\n    html: [text/html]\n    bulk: [TEXT/HTML]\n")
                .find(":4: classify.content_types.bulk[0]: 'text/html' is already listed (under html)"),
            std::string::npos);
}

TEST_F(ClassifyConfigTest, PatternNormalisation) {
  EXPECT_EQ(normalize_media_type_pattern("Text/HTML"), "text/html");
  EXPECT_EQ(normalize_media_type_pattern("image/*"), "image/*");
  EXPECT_EQ(normalize_media_type_pattern("application/vnd.api+json"), "application/vnd.api+json");
  EXPECT_EQ(normalize_media_type_pattern("*/html"), std::nullopt);
  EXPECT_EQ(normalize_media_type_pattern("image/svg*"), std::nullopt);
  EXPECT_EQ(normalize_media_type_pattern("text/"), std::nullopt);
  EXPECT_EQ(normalize_media_type_pattern("text/html/x"), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("WWW.Example.COM"), "www.example.com");
  EXPECT_EQ(normalize_sni_pattern("*.cdn.example.com"), "*.cdn.example.com");
  EXPECT_EQ(normalize_sni_pattern("localhost"), "localhost");
  EXPECT_EQ(normalize_sni_pattern("*"), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("*."), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("a.*.example.com"), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("*example.com"), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("example..com"), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern("example.com."), std::nullopt);
  EXPECT_EQ(normalize_sni_pattern(std::string(64, 'a') + ".com"), std::nullopt);
}

TEST_F(ClassifyConfigTest, AllowList) {
  const auto rules = std::get<std::vector<DestinationRule>>(allow(
      "peers:\n"
      "  - name: branch\n"
      "    allow: [\"10.0.0.0/8:80,443\", \"[2001:db8::]/32\", \"*:443\"]\n"));
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].to_string(), "10.0.0.0/8:80,443");
  EXPECT_EQ(rules[1].to_string(), "[2001:db8::]/32");
  EXPECT_EQ(rules[2].to_string(), "*:443");
  EXPECT_TRUE(std::get<std::vector<DestinationRule>>(allow("peers:\n  - name: branch\n")).empty());
}

TEST_F(ClassifyConfigTest, AllowListErrors) {
  const std::string file = (dir_ / "gw.yaml").string();
  EXPECT_EQ(std::get<std::string>(allow("peers:\n"
                                        "  - name: branch\n"
                                        "    allow:\n"
                                        "      - 10.0.0.0/8\n"
                                        "      - 10.0.0/8\n")),
            file + ":5: peers[0].allow[1]: bad IP address in '10.0.0/8' (names are not resolved)");
  EXPECT_NE(std::get<std::string>(allow("peers:\n  - allow: 10.0.0.0/8\n")).find(":2: peers[0].allow: expected a list"),
            std::string::npos);
  EXPECT_NE(std::get<std::string>(allow("peers:\n  - allow: [\"10.0.0.0/8:0\"]\n")).find("peers[0].allow[0]: bad port"),
            std::string::npos);
}

}  // namespace
}  // namespace egw::config
