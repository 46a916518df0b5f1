// Application detection: which application, and so which category, a
// destination belongs to, from its host name (TLS SNI, a QUIC Initial's SNI)
// or its address. An interface so that another engine (a later nDPI, a
// vendor list) can replace NdpiDetector (ndpi_detector.h) without touching
// the classifier. Implementations are read-only after construction and cost
// microseconds per call: the classifier calls them once per new connection,
// never per packet.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/content_class.h"
#include "tunnel/frames.h"

namespace egw::proxy {

struct AppMatch {
  // The engine's name for the application ("Zoom", "YouTube"); lives as
  // long as the detector.
  std::string_view application;
  ContentClass category = ContentClass::web;
};

class AppDetector {
 public:
  virtual ~AppDetector() = default;
  // `host` lowercase, without a trailing dot.
  virtual std::optional<AppMatch> by_host(std::string_view host) const = 0;
  virtual std::optional<AppMatch> by_address(const tunnel::Destination& destination) const = 0;
};

}  // namespace egw::proxy
