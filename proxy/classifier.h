// Which ContentClass a proxied TCP stream gets, and so its scheduling
// tickets. Two places decide (config/classify_config.h has the rules):
//
//   branch, stream opens:  destination rule (final)  >  SNI rule  >  default
//                          sent to the hub as STREAM_OPEN's class hint
//   hub, response begins:  a plain-HTTP response's Content-Type rule, which
//                          overrides the hint unless that came from a
//                          destination rule
//
// Sans-IO: callers pass the bytes seen so far; nothing is kept between calls.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/content_class.h"
#include "config/classify_config.h"
#include "tunnel/frames.h"

namespace egw::proxy {

class Classifier {
 public:
  explicit Classifier(const config::ClassifyConfig& config);

  struct Decision {
    ContentClass cls;
    bool from_destination;  // final: a Content-Type must not override it
    // SNI rules exist and the client's bytes are an unfinished ClientHello:
    // asking again with more bytes may still give an SNI class.
    bool need_more = false;
  };
  Decision classify_open(const tunnel::Destination& destination, std::span<const std::byte> client_first_bytes) const;

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

 private:
  ContentClass default_;
  std::vector<std::pair<config::DestinationRule, ContentClass>> destinations_;
  std::vector<std::pair<std::string, ContentClass>> hosts_;        // lowercase; "*.x": any name under x
  std::vector<std::pair<std::string, ContentClass>> media_types_;  // lowercase; "type/*": any subtype
};

}  // namespace egw::proxy
