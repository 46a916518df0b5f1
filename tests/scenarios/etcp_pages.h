// The five web pages of E-TCP section 4 (seed 000, "modeled after real pages
// found on the web in summer 1997"), in one place for every experiment and
// benchmark that fetches them.
//
// The paper gives object counts and sizes, some as ranges ("3 medium images
// (7-13K)"). Our reading, so the pages are the same everywhere:
//  - K = 1024 bytes.
//  - A range of n objects is spread evenly and deterministically over it,
//    both ends included: object i of n gets lo + (hi - lo) * i / (n - 1)
//    bytes (integer arithmetic), e.g. 7K, 10K, 13K for "3 medium (7-13K)".
//  - Page order is request order: the root HTML part first (the client
//    requests it alone), then the other HTML parts, then images, then Java
//    parts, each group in the paper's order. The frames page's root is its
//    first small HTML part (a frameset document is small; the 7K and 83K
//    parts are frames it names).
//  - Classes: HTML -> html, images -> image, Java parts -> script.
#pragma once

#include <array>
#include <string_view>

#include "tests/sim/web.h"

namespace egw::scenarios {

enum class EtcpPage { text, map, graphics, frames, java };
inline constexpr std::array<EtcpPage, 5> kEtcpPages{EtcpPage::text, EtcpPage::map,
                                                    EtcpPage::graphics, EtcpPage::frames,
                                                    EtcpPage::java};

constexpr std::string_view to_string(EtcpPage p) {
  switch (p) {
    case EtcpPage::text: return "text";
    case EtcpPage::map: return "map";
    case EtcpPage::graphics: return "graphics";
    case EtcpPage::frames: return "frames";
    case EtcpPage::java: return "java";
  }
  return "?";
}

// The page's objects in request order (see above).
sim::Page etcp_page(EtcpPage page);

// Total bytes of a page (all objects), for reports.
ByteCount page_bytes(const sim::Page& page);

}  // namespace egw::scenarios
