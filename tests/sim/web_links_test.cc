// WebClient link discovery: html_complete queues the embedded objects when
// the root HTML has arrived; while_parsing queues object k of n once byte
// k * size / (n + 1) of the root HTML has arrived (E-TCP 4.3: "issue requests
// as it encounters links while parsing the HTML").
//
//   client ---- 10 Mbit/s, 20 ms, unlimited queue ---- server
//   page: HTML 20000 bytes (~17 packets), 4 images of 1000 bytes
//   while_parsing: links at 20000 * k / 5 = 4000, 8000, 12000, 16000 bytes
#include <gtest/gtest.h>

#include "tests/sim/scenario.h"

namespace egw::sim {
namespace {

Page test_page() {
  Page p{{20'000, ContentClass::html, true}};
  for (int i = 0; i < 4; ++i) p.push_back({1'000, ContentClass::image, false});
  return p;
}

struct Fetch {
  std::vector<ObjectTiming> objects;
  Instant html_done{};
};

Fetch fetch(LinkDiscovery links) {
  PathConfig path;
  path.one_way_delay = ms(20);
  path.max_pairs = 1;
  Scenario s(path);
  PairConfig pc;
  pc.initial_window_packets = 2;  // slow start spreads the HTML over round trips
  const auto pair = s.add_pair(pc);
  auto& web = s.add_web(pair, test_page(), {.max_concurrent = 0, .port = 80, .links = links},
                        instant_at(ms(0)));
  EXPECT_TRUE(s.run_until_done(instant_at(ms(10'000))));
  EXPECT_EQ(web.errors(), 0u);
  return {web.objects(), *web.html_completed_at()};
}

TEST(WebLinks, HtmlCompleteRequestsEverythingWhenTheHtmlHasArrived) {
  const Fetch f = fetch(LinkDiscovery::html_complete);
  for (std::size_t i = 1; i < f.objects.size(); ++i) {
    EXPECT_EQ(f.objects[i].requested_at, f.html_done) << "object " << i;
  }
}

TEST(WebLinks, WhileParsingRequestsObjectsAsTheHtmlArrives) {
  const Fetch f = fetch(LinkDiscovery::while_parsing);
  for (std::size_t i = 1; i < f.objects.size(); ++i) {
    ASSERT_TRUE(f.objects[i].requested_at) << "object " << i;
    // Every link lies before the HTML's end (the last at 16000 of 20000 bytes).
    EXPECT_LT(*f.objects[i].requested_at, f.html_done) << "object " << i;
    // ... and in page order.
    if (i > 1) {
      EXPECT_LE(*f.objects[i - 1].requested_at, *f.objects[i].requested_at);
    }
  }
  // The first link (byte 4000, packet ~4) arrives in an earlier round trip
  // than the last (byte 16000): IW 2 sends 2, 4, 8 ... packets per RTT.
  EXPECT_LT(*f.objects[1].requested_at, *f.objects[4].requested_at);
}

}  // namespace
}  // namespace egw::sim
