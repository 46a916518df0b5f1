#include "config/classify_config.h"

#include <functional>

namespace egw::config {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// RFC 9110 tchar, but without '*': a star is only ever a whole wildcard here.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'+-.^_`|~").find(c) != std::string_view::npos;
}
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!is_token_char(c)) return false;
  }
  return true;
}

bool is_host_label(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  for (const char c : label) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

const std::string kClassNames{kContentClassNames};

ContentClass class_named(const Reader& r, const YAML::Node& node, const std::string& name, const std::string& text) {
  const auto c = content_class_from_string(text);
  if (!c) r.fail(node, name, "unknown class '" + text + "' (expected one of " + kClassNames + ")");
  return *c;
}

// For a mapping `class: [item, ...]`: calls `each(item node, text, its full
// name, class)` in document order.
using ItemFn = std::function<void(const YAML::Node&, const std::string&, const std::string&, ContentClass)>;
void for_each_class_item(const Reader& r, const YAML::Node& map, const std::string& where, const ItemFn& each) {
  if (!map.IsMap()) r.fail(map, where, "expected a mapping of class to list");
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    const std::string name = where + "." + key;
    const ContentClass c = class_named(r, kv.first, name, key);
    const std::vector<std::string> items = r.strings(kv.second, name);  // checks the shape
    if (kv.second.IsScalar()) {
      each(kv.second, items.front(), name, c);
      continue;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      each(kv.second[i], items[i], name + "[" + std::to_string(i) + "]", c);
    }
  }
}

// A pattern listed twice would be dead the second time: most likely a mistake.
template <typename Entries>
void refuse_duplicate(const Reader& r, const Entries& entries, const std::string& pattern, const YAML::Node& node,
                      const std::string& name) {
  for (const auto& [p, c] : entries) {
    if (p == pattern) r.fail(node, name, "'" + pattern + "' is already listed (under " + std::string(to_string(c)) + ")");
  }
}

}  // namespace

std::vector<std::pair<std::string, ContentClass>> ClassifyConfig::default_content_types() {
  return {
      {"text/html", ContentClass::html},
      {"application/xhtml+xml", ContentClass::html},
      {"application/javascript", ContentClass::script},
      {"text/javascript", ContentClass::script},
      {"application/ecmascript", ContentClass::script},
      {"text/css", ContentClass::script},
      {"application/json", ContentClass::script},
      {"application/wasm", ContentClass::script},
      {"image/*", ContentClass::image},
  };
}

std::optional<std::string> normalize_media_type_pattern(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view type = text.substr(0, slash);
  const std::string_view subtype = text.substr(slash + 1);
  if (!is_token(type) || !(subtype == "*" || is_token(subtype))) return std::nullopt;
  return lowercase(text);
}

std::optional<std::string> normalize_sni_pattern(std::string_view text) {
  std::string host = lowercase(text);
  std::string_view rest = host;
  if (rest.starts_with("*.")) rest.remove_prefix(2);
  if (rest.empty() || rest.size() > 253) return std::nullopt;
  while (true) {
    const auto dot = rest.find('.');
    if (!is_host_label(rest.substr(0, dot))) return std::nullopt;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return host;
}

ClassifyConfig parse_classify(const Reader& r, const YAML::Node& section) {
  ClassifyConfig c;
  if (!section || section.IsNull()) return c;
  r.only_keys(section, "classify", {"default", "content_types", "sni", "destinations", "applications", "unknown_host",
                                    "learned_cache", "bulk_after_bytes"});
  const std::string detector = r.string_or(section, "applications", "classify.applications", "ndpi");
  if (detector != "ndpi" && detector != "none") r.fail(section["applications"], "classify.applications", "expected ndpi or none");
  c.detect_applications = detector == "ndpi";
  if (section["unknown_host"]) {
    const std::string text = r.string(section, "unknown_host", "classify.unknown_host");
    c.unknown_host_class = class_named(r, section["unknown_host"], "classify.unknown_host", text);
  }
  c.learned_cache_entries = static_cast<std::size_t>(
      r.integer_or(section, "learned_cache", "classify.learned_cache", 4096, 0, 1'000'000));
  c.bulk_after_bytes = static_cast<std::uint64_t>(
      r.integer_or(section, "bulk_after_bytes", "classify.bulk_after_bytes", 0, 0, std::int64_t{1} << 50));
  if (section["default"]) {
    const std::string text = r.string(section, "default", "classify.default");
    c.default_class = class_named(r, section["default"], "classify.default", text);
  }
  if (const YAML::Node types = section["content_types"]) {
    c.content_types.clear();
    for_each_class_item(r, types, "classify.content_types",
                        [&](const YAML::Node& n, const std::string& text, const std::string& name, ContentClass cls) {
                          const auto p = normalize_media_type_pattern(text);
                          if (!p) {
                            r.fail(n, name, "bad media type '" + text + "' (expected type/subtype or type/*, no parameters)");
                          }
                          refuse_duplicate(r, c.content_types, *p, n, name);
                          c.content_types.emplace_back(*p, cls);
                        });
  }
  if (const YAML::Node sni = section["sni"]) {
    for_each_class_item(r, sni, "classify.sni",
                        [&](const YAML::Node& n, const std::string& text, const std::string& name, ContentClass cls) {
                          const auto p = normalize_sni_pattern(text);
                          if (!p) r.fail(n, name, "bad host name pattern '" + text + "' (expected www.example.com or *.example.com)");
                          refuse_duplicate(r, c.sni, *p, n, name);
                          c.sni.emplace_back(*p, cls);
                        });
  }
  if (const YAML::Node destinations = section["destinations"]) {
    for_each_class_item(r, destinations, "classify.destinations",
                        [&](const YAML::Node& n, const std::string& text, const std::string& name, ContentClass cls) {
                          auto rule = parse_destination_rule(text);
                          if (auto* err = std::get_if<std::string>(&rule)) r.fail(n, name, *err);
                          c.destinations.emplace_back(std::get<DestinationRule>(rule), cls);
                        });
  }
  return c;
}

std::vector<DestinationRule> parse_allow_list(const Reader& r, const YAML::Node& list, const std::string& name) {
  std::vector<DestinationRule> out;
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) r.fail(list, name, "expected a list of destination rules");
  const std::vector<std::string> items = r.strings(list, name);
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto rule = parse_destination_rule(items[i]);
    if (auto* err = std::get_if<std::string>(&rule)) r.fail(list[i], name + "[" + std::to_string(i) + "]", *err);
    out.push_back(std::get<DestinationRule>(rule));
  }
  return out;
}

}  // namespace egw::config
