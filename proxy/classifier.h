// PLACEHOLDER until the classify branch lands (same API).
#pragma once
#include <optional>
#include <span>
#include "config/classify_config.h"
#include "tunnel/frames.h"
namespace egw::proxy {
class Classifier {
 public:
  explicit Classifier(const config::ClassifyConfig& c) : config_(c) {}
  struct Decision { ContentClass cls; bool from_destination; };
  Decision classify_open(const tunnel::Destination& d, std::span<const std::byte>) const {
    for (const auto& [rule, cls] : config_.destinations) if (rule.matches(d)) return {cls, true};
    return {config_.default_class, false};
  }
  enum class ResponseVerdict { need_more, no_match, matched };
  struct ResponseDecision { ResponseVerdict verdict; ContentClass cls; };
  ResponseDecision classify_response(std::span<const std::byte>) const { return {ResponseVerdict::no_match, config_.default_class}; }
 private:
  config::ClassifyConfig config_;
};
}  // namespace egw::proxy
