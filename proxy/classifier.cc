#include "proxy/classifier.h"

#include "proxy/http_head.h"
#include "proxy/tls_client_hello.h"

namespace egw::proxy {
namespace {

// The config parser stores patterns lowercase; a config built in code may not.
std::vector<std::pair<std::string, ContentClass>> lowercased(std::vector<std::pair<std::string, ContentClass>> patterns) {
  for (auto& [p, c] : patterns) {
    for (char& ch : p) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
  }
  return patterns;
}

bool host_matches(std::string_view pattern, std::string_view host) {
  if (!pattern.starts_with("*.")) return host == pattern;
  const std::string_view suffix = pattern.substr(1);  // ".cdn.example.com": the name itself does not match
  return host.size() > suffix.size() && host.ends_with(suffix);
}

bool media_type_matches(std::string_view pattern, std::string_view type) {
  if (pattern.ends_with("/*")) return type.starts_with(pattern.substr(0, pattern.size() - 1));  // "image/"
  return type == pattern;
}

}  // namespace

Classifier::Classifier(const config::ClassifyConfig& config)
    : default_(config.default_class),
      destinations_(config.destinations),
      hosts_(lowercased(config.sni)),
      media_types_(lowercased(config.content_types)) {}

std::optional<ContentClass> Classifier::class_of_destination(const tunnel::Destination& destination) const {
  for (const auto& [rule, c] : destinations_) {
    if (rule.matches(destination)) return c;
  }
  return std::nullopt;
}

std::optional<ContentClass> Classifier::class_of_host(std::string_view host) const {
  for (const auto& [pattern, c] : hosts_) {
    if (host_matches(pattern, host)) return c;
  }
  return std::nullopt;
}

std::optional<ContentClass> Classifier::class_of_media_type(std::string_view media_type) const {
  for (const auto& [pattern, c] : media_types_) {
    if (media_type_matches(pattern, media_type)) return c;
  }
  return std::nullopt;
}

Classifier::Decision Classifier::classify_open(const tunnel::Destination& destination,
                                               std::span<const std::byte> client_first_bytes) const {
  if (const auto c = class_of_destination(destination)) return {*c, true};
  if (hosts_.empty()) return {default_, false};  // no need to parse anything
  const SniScan sni = scan_client_hello(client_first_bytes);
  if (sni.status == SniStatus::found) {
    if (const auto c = class_of_host(sni.host)) return {*c, false};
  }
  return {default_, false, sni.status == SniStatus::need_more};
}

Classifier::ResponseDecision Classifier::classify_response(std::span<const std::byte> server_first_bytes) const {
  if (media_types_.empty()) return {ResponseVerdict::no_match, default_};
  const HttpResponseHead head = scan_http_response_head(server_first_bytes);
  if (head.status == HttpHeadStatus::need_more) return {ResponseVerdict::need_more, default_};
  if (head.content_type) {
    if (const auto c = class_of_media_type(*head.content_type)) return {ResponseVerdict::matched, *c};
  }
  return {ResponseVerdict::no_match, default_};
}

}  // namespace egw::proxy
