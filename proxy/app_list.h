// AppDetector over a newer nDPI host-name list than Debian's libndpi 4.2
// (Feb 2022): proxy/app_list_data.inc, imported from upstream nDPI's
// host_match[] (and, in releases that have them, its generated per-service
// host tables) by scripts/import-ndpi-hosts (the header names the commit;
// LGPL-3.0-or-later like nDPI). Each pattern carries nDPI's application name
// and category name, mapped to ours through ndpi_detector.h's tables, the same
// ones the libndpi stage uses.
//
// by_host asks the list first and then `fallback` (libndpi 4.2): when both
// know a name the newer data wins, since nDPI's later releases correct
// categories and split umbrellas; names only 4.2 knows still match there.
// by_address is the fallback's (the list has no addresses).
//
// Lookup: a hash of the patterns; one probe per label boundary of the host
// (the longest suffix wins), then the label-prefix patterns ("amazon.").
// Built once per process (shared()), read-only afterwards.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "proxy/app_detector.h"

namespace egw::proxy {

class AppListDetector final : public AppDetector {
 public:
  // The process's detector: the list, then NdpiDetector::shared().
  static const AppListDetector& shared();
  // `fallback` may be nullptr (the list alone); it must outlive this.
  explicit AppListDetector(const AppDetector* fallback);

  std::optional<AppMatch> by_host(std::string_view host) const override;
  std::optional<AppMatch> by_address(const tunnel::Destination& destination) const override;

  // The list's own answer, without the fallback.
  std::optional<AppMatch> list_match(std::string_view host) const;
  std::size_t patterns() const { return suffixes_.size() + prefixes_.size(); }
  // Heap the tables take (an estimate from their nodes and buckets).
  std::size_t memory_bytes() const;

 private:
  struct Entry {
    AppMatch match;
    bool subdomains_only = false;  // ".x.com": not x.com itself
  };
  const AppDetector* fallback_;
  std::unordered_map<std::string_view, Entry> suffixes_;  // "zoom.us": the name and names under it
  std::unordered_map<std::string_view, Entry> prefixes_;  // "amazon.": labels at a label start
  std::size_t prefix_labels_max_ = 0;
};

}  // namespace egw::proxy
