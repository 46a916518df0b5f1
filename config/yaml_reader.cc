#include "config/yaml_reader.h"

#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace egw::config {

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

std::string located(const std::string& path, const YAML::Node& node, const std::string& key,
                    const std::string& what) {
  // A node without a position (the null root of an empty file, an absent
  // key) is named at line 1 rather than a line 0 no editor shows.
  const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
  return path + ":" + std::to_string(line) + ": " + key + ": " + what;
}

namespace {

// Walks every mapping once: an alias shares its anchor's node and mark, so
// marks already seen are skipped (no exponential walk through alias fan-out,
// no loop through a self-referencing anchor). Deeper than kMaxDepth nothing
// is a config key any more.
class DuplicateKeyScan {
 public:
  explicit DuplicateKeyScan(const Reader& r) : r_(r) {}

  void walk(const YAML::Node& node, const std::string& where, int depth) {
    if (depth > kMaxDepth || !node.IsDefined() || !(node.IsMap() || node.IsSequence())) return;
    if (!seen_.insert(node.Mark().pos).second) return;
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], where + "[" + std::to_string(i) + "]", depth + 1);
      return;
    }
    std::map<std::string, int> first_line;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;
      const std::string& key = kv.first.Scalar();
      const std::string name = where.empty() ? key : where + "." + key;
      const int line = kv.first.Mark().line + 1;
      const auto [it, fresh] = first_line.emplace(key, line);
      if (!fresh) r_.fail(kv.first, name, "duplicate key (first at line " + std::to_string(it->second) + ")");
      walk(kv.second, name, depth + 1);
    }
  }

 private:
  static constexpr int kMaxDepth = 64;
  const Reader& r_;
  std::set<int> seen_;
};

}  // namespace

void reject_duplicate_keys(const Reader& reader, const YAML::Node& root) {
  DuplicateKeyScan(reader).walk(root, "", 0);
}

void Reader::fail(const YAML::Node& node, const std::string& key, const std::string& what) const {
  throw ConfigError{located(path_, node, key, what)};
}

void Reader::only_keys(const YAML::Node& map, const std::string& where,
                       const std::set<std::string>& allowed) const {
  if (!map.IsMap()) fail(map, where.empty() ? "(top level)" : where, "expected a mapping");
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) fail(kv.first, where.empty() ? key : where + "." + key, "unknown key");
  }
}

std::string Reader::string(const YAML::Node& map, const std::string& key, const std::string& name) const {
  const YAML::Node n = map[key];
  if (!n) fail(map, name, "missing");
  if (!n.IsScalar()) fail(n, name, "expected a string");
  return n.as<std::string>();
}

std::string Reader::string_or(const YAML::Node& map, const std::string& key, const std::string& name,
                              const std::string& fallback) const {
  if (!map[key]) return fallback;
  return string(map, key, name);
}

std::int64_t Reader::integer_or(const YAML::Node& map, const std::string& key, const std::string& name,
                                std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  const YAML::Node n = map[key];
  if (!n) return fallback;
  if (!n.IsScalar()) fail(n, name, "expected an integer");
  const std::string text = n.Scalar();
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) fail(n, name, "expected an integer, got '" + text + "'");
  if (value < min || value > max) {
    fail(n, name, "expected " + std::to_string(min) + ".." + std::to_string(max) + ", got " + text);
  }
  return value;
}

bool Reader::boolean_or(const YAML::Node& map, const std::string& key, const std::string& name,
                        bool fallback) const {
  const YAML::Node n = map[key];
  if (!n) return fallback;
  if (!n.IsScalar()) fail(n, name, "expected true or false");
  const std::string text = n.Scalar();
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  fail(n, name, "expected true or false, got '" + text + "'");
}

std::vector<std::string> Reader::strings(const YAML::Node& node, const std::string& name) const {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(node.Scalar());
    return out;
  }
  if (!node.IsSequence()) fail(node, name, "expected a list");
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar()) fail(node[i], name + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(node[i].Scalar());
  }
  return out;
}

}  // namespace egw::config
