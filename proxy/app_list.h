// AppDetector over a host-name list compiled in (a HostTable), in front of
// another detector. Two tables:
// - ndpi_host_table(): a newer nDPI host-name list than Debian's libndpi 4.2
//   (Feb 2022), proxy/app_list_data.inc, imported from upstream nDPI's
//   host_match[] (and, in releases that have them, its generated per-service
//   host tables) by scripts/import-ndpi-hosts (the header names the commit;
//   LGPL-3.0-or-later like nDPI). Each pattern carries nDPI's application and
//   category names, mapped to ours through ndpi_detector.h's tables, the same
//   ones the libndpi stage uses.
// - v2fly_host_table(): proxy/app_list_v2fly_data.inc, imported from
//   v2fly/domain-list-community (MIT) by scripts/import-v2fly-hosts: the
//   per-service lists named in proxy/app_list_v2fly_services.tsv, each with
//   the category we give that service (the categories are ours, by service,
//   never by host).
// - ut1_host_table(): proxy/app_list_ut1_data.inc, imported from the UT1
//   web filtering lists (Universite Toulouse Capitole, CC BY-SA 4.0) by
//   scripts/import-ut1-hosts: the UT1 categories named in
//   proxy/app_list_ut1_categories.tsv (remote control, DNS over HTTPS, chat,
//   updates, file hosting, radio, audio and video), each with our category.
//   The list names no applications: each of its names is its own.
//
// shared() chains them: the newer nDPI list, then the v2fly list, then the
// UT1 list, then libndpi 4.2. Across the lists, as within one, the most
// specific name answers (swcdn.apple.com: v2fly's apple-update, not the newer
// nDPI list's umbrella apple.com); on a tie the earlier list's, and libndpi
// 4.2 only where no list knows the name. The newer nDPI list first: it is the
// source the detector has always followed, a name it knows as precisely as a
// later list keeps its answer. The v2fly list before libndpi 4.2: 4.2 is an
// older copy of the first list's source, so a name it knows and the newer
// list does not is a stale or an umbrella answer (its categories come from
// nDPI's coarse ones, e.g. Cloud -> bulk), where the v2fly list's answer is a
// per-service judgement on a current list. The UT1
// list after v2fly's: it judges sites for filtering, per category, where the
// lists before it judge applications; before libndpi 4.2 for the same reason
// as v2fly's. by_address is libndpi 4.2's (the lists have no addresses).
//
// Lookup: a hash of the patterns; one probe per label boundary of the host
// (the longest suffix wins), then the label-prefix patterns ("amazon.").
// Built once per process (shared()), read-only afterwards.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "proxy/app_detector.h"

namespace egw::proxy {

// One group of a compiled-in list: an application, its category as the list
// names it, and its patterns, space-separated: "zoom.us" (the name and names
// under it), ".x.com" (names under it only), "=x.com" (that name only),
// "amazon." (a label sequence at a label start: www.amazon.de).
struct HostGroup {
  std::string_view application;
  std::string_view category;
  std::string_view hosts;
};
struct HostTable {
  std::string_view name;  // for the log: "newer nDPI list"
  std::span<const HostGroup> groups;
  // Our category for a group: how this list's category names read.
  ContentClass (*category_of)(std::string_view application, std::string_view category);
  // Each pattern is its own application (a list of sites, not of applications).
  bool patterns_name_applications = false;
};
const HostTable& ndpi_host_table();   // app_list_data.inc, nDPI's category names
const HostTable& v2fly_host_table();  // app_list_v2fly_data.inc, ours
const HostTable& ut1_host_table();    // app_list_ut1_data.inc, ours

class AppListDetector final : public AppDetector {
 public:
  // The process's detector: the newer nDPI list, then shared_v2fly().
  static const AppListDetector& shared();
  // Its second stage: the v2fly list, then shared_ut1().
  static const AppListDetector& shared_v2fly();
  // Its third: the UT1 list, then NdpiDetector::shared().
  static const AppListDetector& shared_ut1();
  // `fallback` may be nullptr (the list alone); both must outlive this.
  AppListDetector(const HostTable& table, const AppDetector* fallback);

  std::optional<AppMatch> by_host(std::string_view host) const override;
  std::optional<AppMatch> by_address(const tunnel::Destination& destination) const override;

  // The list's own answer, without the fallback.
  std::optional<AppMatch> list_match(std::string_view host) const;
  std::string_view name() const { return name_; }
  std::size_t patterns() const { return suffixes_.size() + prefixes_.size(); }
  // Heap the tables take (an estimate from their nodes and buckets).
  std::size_t memory_bytes() const;

 private:
  struct Specific {
    AppMatch match;
    std::size_t suffix_chars = 0;  // the host's characters from where the pattern matched
  };
  // This list's (chain_match: this and the lists after it) most specific
  // match naming more than `longer_than` characters of the host.
  std::optional<Specific> specific_match(std::string_view host, std::size_t longer_than) const;
  std::optional<Specific> chain_match(std::string_view host, std::size_t longer_than) const;
  struct Entry {
    AppMatch match;
    bool subdomains_only = false;  // ".x.com": not x.com itself
    bool name_only = false;        // "=x.com": x.com, no name under it
  };
  std::string_view name_;
  const AppDetector* fallback_;
  const AppListDetector* next_list_;  // the fallback when it is a list too
  const AppDetector* after_lists_;     // the first detector of the chain that is not a list
  std::unordered_map<std::string_view, Entry> suffixes_;  // "zoom.us": the name and names under it
  std::unordered_map<std::string_view, Entry> prefixes_;  // "amazon.": labels at a label start
  std::size_t prefix_labels_max_ = 0;
};

}  // namespace egw::proxy
