// Reading the gateway's YAML config with errors that name the file, the line
// and the key ("gw.yaml:12: peers[0].allow[1]: bad prefix '10.0.0/8'").
// Every section parser takes a Reader and throws ConfigError through it;
// load_gateway_config (config/gateway_config.h) turns that into its result.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace egw::config {

struct ConfigError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // Throws ConfigError "PATH:LINE: KEY: WHAT" (LINE of `node`, 1-based).
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const;
  // `map` must be a mapping whose keys are all in `allowed`; `where` is its
  // own name ("" at the top), used to name unknown keys ("limits.foo").
  void only_keys(const YAML::Node& map, const std::string& where, const std::set<std::string>& allowed) const;

  // Required values: `name` is the full key for messages ("peers[0].public_key").
  std::string string(const YAML::Node& map, const std::string& key, const std::string& name) const;
  // Optional values: `fallback` when the key is absent; present but of the
  // wrong type or outside [min, max] is an error.
  std::string string_or(const YAML::Node& map, const std::string& key, const std::string& name,
                        const std::string& fallback) const;
  std::int64_t integer_or(const YAML::Node& map, const std::string& key, const std::string& name,
                          std::int64_t fallback, std::int64_t min, std::int64_t max) const;
  bool boolean_or(const YAML::Node& map, const std::string& key, const std::string& name, bool fallback) const;
  // A list of scalars (a single scalar is accepted as a list of one).
  std::vector<std::string> strings(const YAML::Node& node, const std::string& name) const;

 private:
  std::string path_;
};

// "PATH:LINE: KEY: WHAT" for a node, without throwing.
std::string located(const std::string& path, const YAML::Node& node, const std::string& key,
                    const std::string& what);

// Throws ConfigError "PATH:LINE: KEY: duplicate key (first at line N)" for
// the first mapping, anywhere under `root`, that repeats a key. yaml-cpp keeps
// both entries and a lookup sees only the first, so an edit appended below an
// old value would be silently ignored.
void reject_duplicate_keys(const Reader& reader, const YAML::Node& root);

// Parses `text` as the YAML file `path` (which names the file in errors;
// key files the config names are still read from disk) and returns
// parse(reader, root), or the error: a YAML syntax error (with its line), a
// duplicate key or a ConfigError from `parse`.
template <class T, class Parse>
std::variant<T, std::string> parse_yaml(const std::string& path, const std::string& text, Parse parse) {
  try {
    const YAML::Node root = YAML::Load(text);
    Reader reader(path);
    reject_duplicate_keys(reader, root);
    return parse(reader, root);
  } catch (const ConfigError& e) {
    return e.message;
  } catch (const YAML::Exception& e) {
    return path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
  }
}

// The file's text, or nullopt if it cannot be read.
std::optional<std::string> read_text_file(const std::string& path);

// Reads `path` and parses it (parse_yaml), or "PATH: cannot read the file".
template <class T, class Parse>
std::variant<T, std::string> load_yaml(const std::string& path, Parse parse) {
  const std::optional<std::string> text = read_text_file(path);
  if (!text) return path + ": cannot read the file";
  return parse_yaml<T>(path, *text, parse);
}

}  // namespace egw::config
