// PLACEHOLDER until the classify branch lands.
#include "config/classify_config.h"
namespace egw::config {
ClassifyConfig parse_classify(const Reader&, const YAML::Node&) { return {}; }
std::vector<DestinationRule> parse_allow_list(const Reader& r, const YAML::Node& list, const std::string& name) {
  std::vector<DestinationRule> out;
  for (const auto& s : r.strings(list, name)) {
    auto rule = parse_destination_rule(s);
    if (auto* err = std::get_if<std::string>(&rule)) r.fail(list, name, *err);
    out.push_back(std::get<DestinationRule>(rule));
  }
  return out;
}
}  // namespace egw::config
