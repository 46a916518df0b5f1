#include "proxy/app_list.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "proxy/ndpi_detector.h"

namespace egw::proxy {
namespace {

// {application, nDPI's category as in NDPI_PROTOCOL_CATEGORY_<category>, patterns}
constexpr HostGroup kNdpiGroups[] = {
#include "proxy/app_list_data.inc"
};
// {application (v2fly's list name), our category, patterns}
constexpr HostGroup kV2flyGroups[] = {
#include "proxy/app_list_v2fly_data.inc"
};
// {UT1 category, our category, names}
constexpr HostGroup kUt1Groups[] = {
#include "proxy/app_list_ut1_data.inc"
};

ContentClass our_category(std::string_view application, std::string_view category) {
  if (const auto c = content_class_from_string(category)) return *c;
  throw std::logic_error("host list: " + std::string(application) + ": unknown category " +
                         std::string(category));
}

}  // namespace

const HostTable& ndpi_host_table() {
  static constexpr HostTable table{"newer nDPI list", kNdpiGroups, &category_of_ndpi_name};
  return table;
}

const HostTable& v2fly_host_table() {
  static constexpr HostTable table{"v2fly list", kV2flyGroups, &our_category};
  return table;
}

const HostTable& ut1_host_table() {
  static constexpr HostTable table{"UT1 list", kUt1Groups, &our_category, true};
  return table;
}

const AppListDetector& AppListDetector::shared_ut1() {
  static const AppListDetector detector(ut1_host_table(), &NdpiDetector::shared());  // never freed, like nDPI's
  return detector;
}

const AppListDetector& AppListDetector::shared_v2fly() {
  static const AppListDetector detector(v2fly_host_table(), &shared_ut1());
  return detector;
}

const AppListDetector& AppListDetector::shared() {
  static const AppListDetector detector(ndpi_host_table(), &shared_v2fly());
  return detector;
}

AppListDetector::AppListDetector(const HostTable& table, const AppDetector* fallback)
    : name_(table.name),
      fallback_(fallback),
      next_list_(dynamic_cast<const AppListDetector*>(fallback)),
      after_lists_(next_list_ ? next_list_->after_lists_ : fallback) {
  for (const HostGroup& g : table.groups) {
    AppMatch match{g.application, table.category_of(g.application, g.category)};
    std::string_view hosts = g.hosts;
    while (!hosts.empty()) {
      const std::size_t end = std::min(hosts.find(' '), hosts.size());
      std::string_view pattern = hosts.substr(0, end);
      hosts.remove_prefix(std::min(end + 1, hosts.size()));
      if (table.patterns_name_applications) match.application = pattern;
      if (pattern.ends_with('.')) {
        prefixes_.try_emplace(pattern, Entry{match});  // the generator already dropped repeats
        const auto labels = static_cast<std::size_t>(std::count(pattern.begin(), pattern.end(), '.'));
        prefix_labels_max_ = std::max(prefix_labels_max_, labels);
      } else if (pattern.starts_with('.')) {
        suffixes_.try_emplace(pattern.substr(1), Entry{match, true});
      } else if (pattern.starts_with('=')) {
        suffixes_.try_emplace(pattern.substr(1), Entry{match, false, true});
      } else {
        suffixes_.try_emplace(pattern, Entry{match});
      }
    }
  }
}

std::optional<AppMatch> AppListDetector::list_match(std::string_view host) const {
  if (auto m = specific_match(host, 0)) return m->match;
  return std::nullopt;
}

std::optional<AppListDetector::Specific> AppListDetector::specific_match(std::string_view host,
                                                                         std::size_t longer_than) const {
  // Longest suffix first: "teams.microsoft.com" before "microsoft.com".
  for (std::size_t at = 0; host.size() - at > longer_than;) {
    if (const auto it = suffixes_.find(host.substr(at));
        it != suffixes_.end() && (at == 0 ? !it->second.subdomains_only : !it->second.name_only)) {
      return Specific{it->second.match, host.size() - at};
    }
    const std::size_t dot = host.find('.', at);
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  // Label prefixes: "amazon." in "www.amazon.de", one to prefix_labels_max_ labels from each label start.
  for (std::size_t at = 0; host.size() - at > longer_than;) {
    std::size_t end = at;
    for (std::size_t labels = 0; labels < prefix_labels_max_; ++labels) {
      end = host.find('.', end);
      if (end == std::string_view::npos) break;
      ++end;  // the pattern keeps its trailing dot
      if (const auto it = prefixes_.find(host.substr(at, end - at)); it != prefixes_.end()) {
        return Specific{it->second.match, host.size() - at};
      }
    }
    const std::size_t dot = host.find('.', at);
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  return std::nullopt;
}

std::optional<AppListDetector::Specific> AppListDetector::chain_match(std::string_view host,
                                                                      std::size_t longer_than) const {
  auto own = specific_match(host, longer_than);
  if (!next_list_) return own;
  // A later list answers only with a longer name: on a tie the earlier list's stands.
  auto later = next_list_->chain_match(host, own ? own->suffix_chars : longer_than);
  return later ? later : own;
}

std::optional<AppMatch> AppListDetector::by_host(std::string_view host) const {
  if (auto m = chain_match(host, 0)) return m->match;
  return after_lists_ ? after_lists_->by_host(host) : std::nullopt;
}

std::optional<AppMatch> AppListDetector::by_address(const tunnel::Destination& destination) const {
  return fallback_ ? fallback_->by_address(destination) : std::nullopt;
}

std::size_t AppListDetector::memory_bytes() const {
  // A node holds the key, the entry and the next pointer and hash (libstdc++), plus a bucket pointer each.
  const std::size_t node = sizeof(std::string_view) + sizeof(Entry) + 2 * sizeof(void*);
  return (suffixes_.size() + prefixes_.size()) * node +
         (suffixes_.bucket_count() + prefixes_.bucket_count()) * sizeof(void*);
}

}  // namespace egw::proxy
