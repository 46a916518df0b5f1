// The `classify:` section: how the gateway picks a stream's ContentClass
// (proxy/classifier.h), and the hub's per-peer allow lists of destinations.
//
//   classify:
//     default: bulk
//     content_types:                # replaces the defaults below when given
//       html: [text/html, application/xhtml+xml]
//       image: ["image/*"]
//     sni: { image: ["*.cdn.example.com"], html: [www.example.com] }
//     destinations: { bulk: ["10.2.0.0/16:21,22", "[2001:db8::]/32"] }
//     applications: ndpi            # or none: application detection (proxy/app_detector.h)
//     unknown_host: web             # a TLS name no rule or detector knows
//     learned_cache: 4096           # destinations remembered from SNI decisions; 0: none
//     bulk_after_bytes: 10000000    # a stream past this many bytes falls to bulk; 0: never
//
// Every list is tried first match wins, in document order: a class's entries
// in their order, the classes in the order their keys appear. Patterns are
// stored lowercase. Unknown keys and classes are errors.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/content_class.h"
#include "config/net_prefix.h"
#include "config/yaml_reader.h"

namespace egw::config {

struct ClassifyConfig {
  ContentClass default_class = ContentClass::bulk;
  // Media types ("text/html"; "image/*" matches any subtype), matched against
  // a response's Content-Type without its parameters, case-insensitively.
  std::vector<std::pair<std::string, ContentClass>> content_types = default_content_types();
  // TLS SNI host patterns: "www.example.com" exactly, "*.cdn.example.com"
  // for one or more labels in front of cdn.example.com (not itself).
  std::vector<std::pair<std::string, ContentClass>> sni;
  // Destination rules: final, a Content-Type does not override them.
  std::vector<std::pair<DestinationRule, ContentClass>> destinations;
  // Application detection by host name and address with nDPI (the stages
  // after the admin's rules, proxy/classifier.h).
  bool detect_applications = true;
  // The class of a TLS connection whose host name nothing recognised: HTTPS
  // whose content type is invisible.
  ContentClass unknown_host_class = ContentClass::web;
  // Entries of the learned cache (destination address:port -> category).
  std::size_t learned_cache_entries = 4096;
  // E-TCP's decay by behaviour: a stream that has carried this many bytes
  // (both ways) falls to bulk, unless a destination rule named its class.
  std::uint64_t bulk_after_bytes = 0;

  static std::vector<std::pair<std::string, ContentClass>> default_content_types();
};

// `section` may be absent or null: the defaults.
ClassifyConfig parse_classify(const Reader& r, const YAML::Node& section);

// A list of destination rules (parse_destination_rule); `name` is its full
// key for messages ("peers[0].allow"). Absent or null is an empty list,
// which allows nothing.
std::vector<DestinationRule> parse_allow_list(const Reader& r, const YAML::Node& list, const std::string& name);

// Validation and normalisation shared with the classifier: the lowercase
// pattern, or nullopt if it is not one.
//   "Text/HTML" -> "text/html", "image/*" ok, "*/*" and "text/html; q=1" not.
std::optional<std::string> normalize_media_type_pattern(std::string_view text);
//   "WWW.Example.com" -> "www.example.com", "*.cdn.example.com" ok, "a.*.b" not.
std::optional<std::string> normalize_sni_pattern(std::string_view text);

}  // namespace egw::config
