#include "proxy/classifier.h"

#include "proxy/app_list.h"
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

// Labels of a name nothing else knew that say what it carries, whatever
// the company: general words, not host names (docs/config.md). A label
// matches with trailing digits ("download2") and between dashes.
struct Token {
  std::string_view word;
  ContentClass category;
};
constexpr Token kTokens[] = {
    {"meet", ContentClass::realtime},   {"voip", ContentClass::realtime},   {"sip", ContentClass::realtime},
    {"stun", ContentClass::realtime},   {"turn", ContentClass::realtime},   {"webrtc", ContentClass::realtime},
    {"vod", ContentClass::streaming},   {"video", ContentClass::streaming}, {"stream", ContentClass::streaming},
    {"streaming", ContentClass::streaming},
    {"download", ContentClass::bulk},   {"downloads", ContentClass::bulk},  {"dl", ContentClass::bulk},
    {"update", ContentClass::bulk},     {"updates", ContentClass::bulk},    {"upload", ContentClass::bulk},
    {"backup", ContentClass::bulk},     {"ftp", ContentClass::bulk},        {"mirror", ContentClass::bulk},
    {"mirrors", ContentClass::bulk},
};

std::optional<ContentClass> class_of_tokens(std::string_view host) {
  std::optional<ContentClass> best;  // realtime over streaming over bulk: the table's order
  std::size_t best_rank = std::size(kTokens);
  while (!host.empty()) {
    const std::size_t end = host.find_first_of(".-");
    std::string_view word = host.substr(0, end);
    while (!word.empty() && word.back() >= '0' && word.back() <= '9') word.remove_suffix(1);
    for (std::size_t i = 0; i < best_rank; ++i) {
      if (kTokens[i].word == word) {
        best = kTokens[i].category;
        best_rank = i;
        break;
      }
    }
    if (end == std::string_view::npos) break;
    host.remove_prefix(end + 1);
  }
  return best;
}

}  // namespace

std::string_view to_string(Stage s) {
  switch (s) {
    case Stage::destination_rule: return "destination_rule";
    case Stage::sni_rule: return "sni_rule";
    case Stage::sni_detector: return "sni_detector";
    case Stage::sni_tokens: return "sni_tokens";
    case Stage::address_detector: return "address_detector";
    case Stage::learned: return "learned";
    case Stage::unknown_host: return "unknown_host";
    case Stage::fallback: return "default";
  }
  return "default";
}

Classifier::Classifier(const config::ClassifyConfig& config, const AppDetector* detector,
                       std::shared_ptr<ClassifierCache> cache)
    : default_(config.default_class),
      unknown_host_(config.unknown_host_class),
      bulk_after_bytes_(config.bulk_after_bytes),
      detector_(config.detect_applications ? (detector ? detector : &AppListDetector::shared()) : nullptr),
      cache_(cache ? std::move(cache) : std::make_shared<ClassifierCache>(config.learned_cache_entries)),
      destinations_(config.destinations),
      hosts_(lowercased(config.sni)),
      media_types_(lowercased(config.content_types)) {}

std::optional<Classifier::Decision> Classifier::class_of_sni(std::string_view host) const {
  if (const auto c = class_of_host(host)) return Decision{*c, false, false, Stage::sni_rule, {}};
  if (!detector_) return std::nullopt;
  if (const auto m = detector_->by_host(host)) {
    // "web" is the detector's catch-all (a company's umbrella, an unmapped
    // category); a general word in the name says more: download.nvidia.com.
    if (m->category == ContentClass::web) {
      if (const auto c = class_of_tokens(host)) return Decision{*c, false, false, Stage::sni_tokens, m->application};
    }
    return Decision{m->category, false, false, Stage::sni_detector, m->application};
  }
  if (const auto c = class_of_tokens(host)) return Decision{*c, false, false, Stage::sni_tokens, {}};
  return std::nullopt;
}

Classifier::Decision Classifier::classify_without_sni(const tunnel::Destination& destination,
                                                      bool tls_name_unknown) const {
  if (detector_) {
    if (const auto m = detector_->by_address(destination)) {
      return {m->category, false, false, Stage::address_detector, m->application};
    }
  }
  if (const auto e = cache_->find(destination)) return {e->category, false, false, Stage::learned, e->application};
  if (tls_name_unknown) return {unknown_host_, false, false, Stage::unknown_host, {}};
  return {default_, false, false, Stage::fallback, {}};
}

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
  if (const auto c = class_of_destination(destination)) return {*c, true, false, Stage::destination_rule, {}};
  if (hosts_.empty() && !detector_) return {default_, false, false, Stage::fallback, {}};  // nothing to parse for
  const SniScan sni = scan_client_hello(client_first_bytes);
  Decision d = classify_named(destination, sni.status == SniStatus::found ? std::optional<std::string_view>(sni.host)
                                                                           : std::nullopt);
  d.need_more = sni.status == SniStatus::need_more;
  return d;
}

Classifier::Decision Classifier::classify_named(const tunnel::Destination& destination,
                                                std::optional<std::string_view> host) const {
  if (const auto c = class_of_destination(destination)) return {*c, true, false, Stage::destination_rule, {}};
  if (host) {
    if (auto d = class_of_sni(*host)) {
      // A later connection here without a usable SNI (ECH, none) gets the same.
      cache_->learn(destination, {d->application, d->cls});
      return *d;
    }
  }
  return classify_without_sni(destination, host.has_value());
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
