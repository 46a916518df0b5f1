// PLACEHOLDER until the classify branch lands (same API).
#pragma once
#include <string>
#include <utility>
#include <vector>
#include "common/content_class.h"
#include "config/net_prefix.h"
#include "config/yaml_reader.h"
namespace egw::config {
struct ClassifyConfig {
  ContentClass default_class = ContentClass::bulk;
  std::vector<std::pair<std::string, ContentClass>> content_types;
  std::vector<std::pair<std::string, ContentClass>> sni;
  std::vector<std::pair<DestinationRule, ContentClass>> destinations;
};
ClassifyConfig parse_classify(const Reader& r, const YAML::Node& section);
std::vector<DestinationRule> parse_allow_list(const Reader& r, const YAML::Node& list, const std::string& name);
}  // namespace egw::config
