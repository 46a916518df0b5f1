// PLACEHOLDER until the classify branch lands.
#include "config/classify_config.h"
namespace egw::config {
ClassifyConfig parse_classify(const Reader&, const YAML::Node&) { return {}; }
std::vector<DestinationRule> parse_allow_list(const Reader& r, const YAML::Node& list, const std::string& name) {
  std::vector<DestinationRule> out;
  for (const auto& s : r.strings(list, name)) out.push_back(std::get<DestinationRule>(parse_destination_rule(s)));
  return out;
}
}  // namespace egw::config
