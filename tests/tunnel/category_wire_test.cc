// Issue 21's categories on the wire: a peer that has not said it knows them
// (an older build fails a frame with a class byte >= 4, and with it every
// packet carrying it) gets the nearest content type; one that knows them
// gets the category. The sender's own stream keeps its category.
#include <gtest/gtest.h>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/connection.h"

namespace egw::tunnel {
namespace {

using testing::ConnectionPair;
using testing::destination_at;
using testing::pattern;

struct Seen {
  ContentClass hub_open;    // STREAM_OPEN's hint at the hub
  ContentClass hub_change;  // after a STREAM_CLASS
  ContentClass client_own;  // the sender's stream
};

Seen run(bool peer_knows, ContentClass opened_as, ContentClass changed_to) {
  auto o = ConnectionPair::default_options();
  o.client.peer_knows_categories = peer_knows;
  ConnectionPair pair(o);
  auto id = *pair.client().open_stream(destination_at(10, 443), opened_as, pair.now());
  pair.client_app().send(id, pattern(100, 1), false);
  EXPECT_TRUE(pair.run_until([&] { return !pair.hub_app().opened.empty(); }));
  Seen seen{pair.hub_app().opened.front().content_class, ContentClass::bulk, *pair.client().stream_class(id)};
  pair.client().set_stream_class(id, changed_to, pair.now());
  pair.run_for(ms(200));
  seen.hub_change = *pair.hub().stream_class(id);
  return seen;
}

TEST(CategoryWire, AnOlderPeerGetsTheNearestContentType) {
  const Seen s = run(false, ContentClass::realtime, ContentClass::streaming);
  EXPECT_EQ(s.hub_open, ContentClass::html);
  EXPECT_EQ(s.hub_change, ContentClass::image);
  EXPECT_EQ(s.client_own, ContentClass::realtime);
  // Content types themselves pass unchanged.
  EXPECT_EQ(run(false, ContentClass::script, ContentClass::bulk).hub_open, ContentClass::script);
  EXPECT_EQ(run(false, ContentClass::script, ContentClass::bulk).hub_change, ContentClass::bulk);
}

TEST(CategoryWire, APeerThatKnowsTheCategoriesGetsThem) {
  const Seen s = run(true, ContentClass::realtime, ContentClass::streaming);
  EXPECT_EQ(s.hub_open, ContentClass::realtime);
  EXPECT_EQ(s.hub_change, ContentClass::streaming);
  EXPECT_EQ(run(true, ContentClass::interactive, ContentClass::web).hub_change, ContentClass::web);
}

TEST(CategoryWire, EveryCategoryMapsToAClassAnOlderBuildKnows) {
  for (int v = 0; v < kContentClassCount; ++v) {
    const ContentClass c = nearest_content_type(static_cast<ContentClass>(v));
    EXPECT_LT(static_cast<int>(c), kContentTypeClassCount) << v;
    if (v < kContentTypeClassCount) {
      EXPECT_EQ(static_cast<int>(c), v);
    }
  }
}

}  // namespace
}  // namespace egw::tunnel
