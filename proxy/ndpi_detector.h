// AppDetector over nDPI (Debian libndpi 4.2): its host-name automata
// (ndpi_match_string_subprotocol: thousands of names of hundreds of
// applications) and its IP lists (ndpi_network_ptree_match: the address
// blocks of the big services), nDPI's category for each application, and
// our table from nDPI's categories and, where a category is too coarse,
// applications, to ours (docs/config.md has both; app_list.h uses them too).
//
// nDPI's detection module costs ~100 ms and tens of MB to build (its
// automata): one per process, built on first use (shared()) and never
// freed; read-only afterwards, so calls need no lock.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "proxy/app_detector.h"

struct ndpi_detection_module_struct;

namespace egw::proxy {

class NdpiDetector final : public AppDetector {
 public:
  // The process's detector (built on the first call).
  static const NdpiDetector& shared();

  std::optional<AppMatch> by_host(std::string_view host) const override;
  std::optional<AppMatch> by_address(const tunnel::Destination& destination) const override;

  // What building it cost (for the log and status).
  double init_ms() const { return init_ms_; }
  // nDPI's own version string ("4.2.0-...").
  static std::string_view version();

 private:
  NdpiDetector();
  std::optional<AppMatch> match_of(std::uint16_t protocol_id) const;

  ndpi_detection_module_struct* ndpi_ = nullptr;
  double init_ms_ = 0;
};

// Our category for an nDPI application: its name first (the table of
// exceptions), else its nDPI category (ndpi_protocol_category_t's value).
ContentClass category_of_ndpi(std::string_view application, int ndpi_category);
// The same, for a list that names the category ("VIDEO", as in
// NDPI_PROTOCOL_CATEGORY_VIDEO): the newer list of app_list.h.
ContentClass category_of_ndpi_name(std::string_view application, std::string_view ndpi_category_name);

}  // namespace egw::proxy
