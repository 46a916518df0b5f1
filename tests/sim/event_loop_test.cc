#include "tests/sim/event_loop.h"

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace egw::sim {
namespace {

Instant at_ms(std::int64_t v) { return instant_at(ms(v)); }

TEST(EventLoopTest, RunsInTimeOrderAndTiesInInsertionOrder) {
  EventLoop loop;
  std::vector<std::string> order;
  loop.schedule_at(at_ms(20), [&] { order.push_back("b@20"); });
  loop.schedule_at(at_ms(10), [&] { order.push_back("a@10"); });
  loop.schedule_at(at_ms(20), [&] { order.push_back("c@20"); });
  loop.schedule_at(at_ms(20), [&] { order.push_back("d@20"); });
  loop.run_until(at_ms(100));
  EXPECT_EQ(order, (std::vector<std::string>{"a@10", "b@20", "c@20", "d@20"}));
  EXPECT_EQ(loop.now(), at_ms(100));
  EXPECT_EQ(loop.events_run(), 4u);
}

TEST(EventLoopTest, CallbackSeesItsOwnTimeAndCanScheduleAtNow) {
  EventLoop loop;
  std::vector<std::pair<std::string, Instant>> seen;
  loop.schedule_at(at_ms(5), [&] {
    seen.emplace_back("first", loop.now());
    // Same instant: runs after everything already queued for 5 ms.
    loop.schedule_in(ms(0), [&] { seen.emplace_back("nested", loop.now()); });
  });
  loop.schedule_at(at_ms(5), [&] { seen.emplace_back("second", loop.now()); });
  loop.run_until(at_ms(5));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, "first");
  EXPECT_EQ(seen[1].first, "second");
  EXPECT_EQ(seen[2].first, "nested");
  for (const auto& s : seen) EXPECT_EQ(s.second, at_ms(5));
}

TEST(EventLoopTest, SchedulingInThePastThrows) {
  EventLoop loop;
  loop.run_until(at_ms(10));
  EXPECT_THROW(loop.schedule_at(at_ms(9), [] {}), std::logic_error);
  EXPECT_THROW(loop.schedule_in(ms(-1), [] {}), std::logic_error);
  EXPECT_THROW(loop.run_until(at_ms(5)), std::logic_error);
  EXPECT_NO_THROW(loop.schedule_at(at_ms(10), [] {}));
}

TEST(EventLoopTest, RunUntilStopsAtDeadlineAndLeavesLaterEvents) {
  EventLoop loop;
  int ran = 0;
  loop.schedule_at(at_ms(10), [&] { ++ran; });
  loop.schedule_at(at_ms(30), [&] { ++ran; });
  loop.run_until(at_ms(20));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(loop.now(), at_ms(20));
  EXPECT_EQ(loop.pending(), 1u);
  loop.run_until(at_ms(30));  // an event exactly at the deadline runs
  EXPECT_EQ(ran, 2);
}

TEST(EventLoopTest, RunUntilPredicateStopsWhenDone) {
  EventLoop loop;
  int counter = 0;
  for (int i = 1; i <= 10; ++i) loop.schedule_at(at_ms(i * 10), [&] { ++counter; });
  EXPECT_TRUE(loop.run_until([&] { return counter == 3; }, at_ms(1000)));
  EXPECT_EQ(loop.now(), at_ms(30));  // the third event at 3 * 10 ms
  // Not reachable before the deadline: stops there and reports false.
  EXPECT_FALSE(loop.run_until([&] { return counter == 100; }, at_ms(55)));
  EXPECT_EQ(counter, 5);  // events at 40 and 50 ms ran
  EXPECT_EQ(loop.now(), at_ms(55));
}

TEST(EventLoopTest, CancelledEventsDoNotRun) {
  EventLoop loop;
  int ran = 0;
  const EventId a = loop.schedule_at(at_ms(1), [&] { ran += 1; });
  loop.schedule_at(at_ms(2), [&] { ran += 10; });
  EXPECT_TRUE(loop.cancel(a));
  EXPECT_FALSE(loop.cancel(a));  // twice
  EXPECT_EQ(loop.pending(), 1u);
  loop.run_until(at_ms(5));
  EXPECT_EQ(ran, 10);
  EXPECT_FALSE(loop.cancel(a + 1));  // already ran
}

// Two loops fed the same pseudo-random schedule produce the same trace.
std::vector<std::pair<std::int64_t, int>> random_trace(std::uint64_t seed) {
  EventLoop loop;
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, int>> trace;
  for (int i = 0; i < 200; ++i) {
    const auto t = static_cast<std::int64_t>(rng() % 50);  // many ties
    loop.schedule_at(instant_at(us(t)), [&, i] {
      trace.emplace_back(loop.now().time_since_epoch().count(), i);
    });
  }
  loop.run_until(at_ms(1));
  return trace;
}

TEST(EventLoopTest, DeterministicForTheSameSchedule) {
  const auto a = random_trace(42);
  const auto b = random_trace(42);
  ASSERT_EQ(a.size(), 200u);
  EXPECT_EQ(a, b);
  for (std::size_t i = 1; i < a.size(); ++i) {
    // Time never goes back; equal times keep insertion order.
    ASSERT_LE(a[i - 1].first, a[i].first);
    if (a[i - 1].first == a[i].first) {
      ASSERT_LT(a[i - 1].second, a[i].second);
    }
  }
}

}  // namespace
}  // namespace egw::sim
