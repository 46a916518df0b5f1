#include "tests/scenarios/etcp_pages.h"

namespace egw::scenarios {

namespace {

constexpr ByteCount kK = 1024;

// n objects of `cls` spread evenly over [lo_k, hi_k] K, both ends included.
void add_range(sim::Page& page, int n, ByteCount lo_k, ByteCount hi_k, ContentClass cls) {
  const ByteCount lo = lo_k * kK;
  const ByteCount hi = hi_k * kK;
  for (int i = 0; i < n; ++i) {
    const ByteCount size =
        n == 1 ? lo : lo + (hi - lo) * static_cast<ByteCount>(i) / static_cast<ByteCount>(n - 1);
    page.push_back(sim::WebObject{size, cls, cls == ContentClass::html});
  }
}

void add_one(sim::Page& page, ByteCount size_k, ContentClass cls) {
  add_range(page, 1, size_k, size_k, cls);
}

}  // namespace

sim::Page etcp_page(EtcpPage which) {
  using enum ContentClass;
  sim::Page p;
  switch (which) {
    case EtcpPage::text:  // 1 large HTML (29K), 3 medium images (7-13K)
      add_one(p, 29, html);
      add_range(p, 3, 7, 13, image);
      break;
    case EtcpPage::map:  // 1 small HTML (5K), 3 small images (1-3K), 1 large image (67K)
      add_one(p, 5, html);
      add_range(p, 3, 1, 3, image);
      add_one(p, 67, image);
      break;
    case EtcpPage::graphics:  // 1 medium HTML (7K), 9 small images (1-3K), 4 medium (9-12K)
      add_one(p, 7, html);
      add_range(p, 9, 1, 3, image);
      add_range(p, 4, 9, 12, image);
      break;
    case EtcpPage::frames:
      // 4 small HTML (1-2K), 1 medium HTML (7K), 1 large HTML (83K),
      // 14 small images (1-3K), 7 medium images (5-19K). Root: the first 1K part.
      add_range(p, 4, 1, 2, html);
      add_one(p, 7, html);
      add_one(p, 83, html);
      add_range(p, 14, 1, 3, image);
      add_range(p, 7, 5, 19, image);
      break;
    case EtcpPage::java:
      // 1 medium HTML (8K), 7 small images (1-2K), 3 medium images (4-11K),
      // 14 small Java parts (1-3K), 11 medium Java parts (4-18K).
      add_one(p, 8, html);
      add_range(p, 7, 1, 2, image);
      add_range(p, 3, 4, 11, image);
      add_range(p, 14, 1, 3, script);
      add_range(p, 11, 4, 18, script);
      break;
  }
  return p;
}

ByteCount page_bytes(const sim::Page& page) {
  ByteCount total = 0;
  for (const auto& o : page) total += o.size_bytes;
  return total;
}

}  // namespace egw::scenarios
