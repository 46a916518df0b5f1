// Which ContentClass a proxied TCP stream gets, and so its scheduling
// tickets. Two places decide (config/classify_config.h has the rules):
//
//   branch, stream opens, cheapest and most trusted first (Stage):
//     admin destination rule (final) > admin SNI pattern > nDPI by SNI
//     (the newer list, then libndpi 4.2) >
//     name tokens ("download", "vod", ...) > nDPI by destination address >
//     learned cache (address:port, filled by SNI decisions) >
//     unknown_host (TLS with a name nothing knew: web) > default;
//     sent to the hub as STREAM_OPEN's class hint
//   hub, response begins:  a plain-HTTP response's Content-Type rule, which
//                          overrides the hint unless that came from a
//                          destination rule
//
// Sans-IO: callers pass the bytes seen so far; only the learned cache is kept
// between calls (a decision writes it, a connection without SNI reads it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/content_class.h"
#include "config/classify_config.h"
#include "proxy/app_detector.h"
#include "proxy/classifier_cache.h"
#include "tunnel/frames.h"

namespace egw::proxy {

// Which stage decided (metrics, status, the benchmark).
enum class Stage : std::uint8_t {
  destination_rule, sni_rule, sni_detector, sni_tokens, address_detector, learned, unknown_host, fallback,
};
inline constexpr int kStageCount = 8;
std::string_view to_string(Stage s);

class Classifier {
 public:
  // `detector`: nullptr is the newer nDPI list, the v2fly list, the UT1
  // list, then libndpi 4.2 (AppListDetector::shared(), app_list.h) when the config
  // asks for detection. The learned cache is the classifier's own unless
  // one is given (a reload may hand the old one on).
  explicit Classifier(const config::ClassifyConfig& config, const AppDetector* detector = nullptr,
                      std::shared_ptr<ClassifierCache> cache = nullptr);

  struct Decision {
    ContentClass cls;
    bool from_destination;  // final: a Content-Type must not override it
    // SNI matters (rules or detection) and the client's bytes are an
    // unfinished ClientHello: asking again with more bytes may still give
    // an SNI class.
    bool need_more = false;
    Stage stage = Stage::fallback;
    std::string_view application;  // the detector's name, or empty
  };
  Decision classify_open(const tunnel::Destination& destination, std::span<const std::byte> client_first_bytes) const;
  // The same once the host name is known (a TLS SNI, a QUIC Initial's) or
  // known to be absent (nullopt): the stages after the parse.
  Decision classify_named(const tunnel::Destination& destination, std::optional<std::string_view> host) const;

  enum class ResponseVerdict {
    need_more,  // an HTTP response head still arriving
    no_match,   // not HTTP, no Content-Type, or none that a rule names: keep the open decision
    matched,
  };
  struct ResponseDecision {
    ResponseVerdict verdict;
    ContentClass cls;  // matched: the rule's class; otherwise the default
  };
  ResponseDecision classify_response(std::span<const std::byte> server_first_bytes) const;

  // The single rule kinds, first match wins; also for a hub that wants to
  // know whether a destination rule makes a stream's class final.
  std::optional<ContentClass> class_of_destination(const tunnel::Destination& destination) const;
  std::optional<ContentClass> class_of_host(std::string_view host) const;              // lowercase
  std::optional<ContentClass> class_of_media_type(std::string_view media_type) const;  // lowercase
  ContentClass default_class() const { return default_; }
  // The host-name stages alone (admin pattern > detector > tokens); for a
  // QUIC Initial's SNI too. nullopt: nothing knew the name.
  std::optional<Decision> class_of_sni(std::string_view host) const;
  std::uint64_t bulk_after_bytes() const { return bulk_after_bytes_; }
  const std::shared_ptr<ClassifierCache>& cache() const { return cache_; }

 private:
  Decision classify_without_sni(const tunnel::Destination& destination, bool tls_name_unknown) const;

  ContentClass default_;
  ContentClass unknown_host_;
  std::uint64_t bulk_after_bytes_;
  const AppDetector* detector_;  // nullptr: no detection
  std::shared_ptr<ClassifierCache> cache_;  // learned on decisions, read on lookups
  std::vector<std::pair<config::DestinationRule, ContentClass>> destinations_;
  std::vector<std::pair<std::string, ContentClass>> hosts_;        // lowercase; "*.x": any name under x
  std::vector<std::pair<std::string, ContentClass>> media_types_;  // lowercase; "type/*": any subtype
};

}  // namespace egw::proxy
