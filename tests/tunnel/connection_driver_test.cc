// tunnel::ConnectionDriver: the service loop the simulator and the Asio
// driver share. Most tests drive a scripted FakeConnection (events, datagrams
// and deadlines set by the test); the last ones drive two real Connections.
#include "tunnel/connection_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_protection.h"
#include "tests/tunnel/connection_pair.h"

namespace egw::tunnel {
namespace {

Instant at_ms(int v) { return instant_at(ms(v)); }

// What the driver asks of a connection, scripted.
struct FakeConnection {
  struct Datagram {
    std::size_t bytes = 0;
    bool low_priority = false;
    std::byte fill{};
  };
  std::deque<ConnectionEvent> events;
  std::deque<Datagram> datagrams;
  bool endless_datagrams = false;  // poll_transmit never says "nothing"
  std::optional<Instant> timeout;
  std::function<void(Instant)> on_timeout_hook;  // default: clears the timeout
  std::function<void()> on_drained;  // poll_transmit found nothing to send
  std::vector<Instant> timeouts_called;
  std::vector<std::vector<std::byte>> received;

  void on_datagram(std::span<std::byte> datagram, Instant) {
    received.emplace_back(datagram.begin(), datagram.end());
  }
  std::optional<Transmit> poll_transmit(Instant, std::span<std::byte> buffer) {
    if (endless_datagrams) return Transmit{1, false};
    if (datagrams.empty()) {
      if (on_drained) on_drained();
      return std::nullopt;
    }
    const Datagram d = datagrams.front();
    datagrams.pop_front();
    for (std::size_t i = 0; i < d.bytes; ++i) buffer[i] = d.fill;
    return Transmit{d.bytes, d.low_priority};
  }
  std::optional<Instant> next_timeout() const { return timeout; }
  void on_timeout(Instant now) {
    timeouts_called.push_back(now);
    if (on_timeout_hook) on_timeout_hook(now);
    else timeout.reset();
  }
  std::optional<ConnectionEvent> poll_event() {
    if (events.empty()) return std::nullopt;
    ConnectionEvent e = std::move(events.front());
    events.pop_front();
    return e;
  }
};

using FakeDriver = BasicConnectionDriver<FakeConnection>;

struct Recorder final : ConnectionEventHandler, TransmitSink, DriverTimer {
  std::vector<std::string> log;  // events and datagrams, in the order seen
  std::vector<std::vector<std::byte>> sent;
  std::vector<bool> sent_low_priority;
  std::vector<Instant> armed;
  std::function<void(const StreamReadable&)> on_readable;

  void on_stream_opened(const StreamOpened& e, Instant) override {
    log.push_back("opened " + std::to_string(e.id));
  }
  void on_stream_readable(const StreamReadable& e, Instant) override {
    log.push_back("readable " + std::to_string(e.id));
    if (on_readable) on_readable(e);
  }
  void on_stream_writable(const StreamWritable& e, Instant) override {
    log.push_back("writable " + std::to_string(e.id));
  }
  void on_stream_reset(const StreamReset& e, Instant) override {
    log.push_back("reset " + std::to_string(e.id) + " " + std::to_string(e.error_code));
  }
  void on_stream_closed(const StreamClosed& e, Instant) override {
    log.push_back("closed " + std::to_string(e.id));
  }
  void on_connection_closed(const ConnectionClosed& e, Instant) override {
    log.push_back("connection closed " + e.reason);
  }
  void transmit(std::span<const std::byte> datagram, bool low_priority) override {
    log.push_back("datagram " + std::to_string(datagram.size()));
    sent.emplace_back(datagram.begin(), datagram.end());
    sent_low_priority.push_back(low_priority);
  }
  void arm(Instant deadline) override { armed.push_back(deadline); }
  void resume_soon() override { ++resumes; }
  int resumes = 0;
};

struct Fixture {
  explicit Fixture(DriverLimits limits = {})
      : driver(conn, rec, rec, rec, buffer, limits) {}
  FakeConnection conn;
  Recorder rec;
  std::vector<std::byte> buffer = std::vector<std::byte>(1500);
  FakeDriver driver;
};

TEST(ConnectionDriver, DispatchesEveryEventKindInOrder) {
  Fixture f;
  f.conn.events = {StreamOpened{4, {}, ContentClass::html}, StreamReadable{4}, StreamWritable{4},
                   StreamReset{8, 7},  StreamClosed{4},  ConnectionClosed{0, "bye"}};
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.log, (std::vector<std::string>{"opened 4", "readable 4", "writable 4", "reset 8 7",
                                                 "closed 4", "connection closed bye"}));
  EXPECT_EQ(f.driver.stats().events, 6u);
  EXPECT_FALSE(f.driver.in_service());
}

TEST(ConnectionDriver, DrainsEveryDatagramIntoTheSinkAfterTheEvents) {
  Fixture f;
  f.conn.events = {StreamReadable{0}};
  f.conn.datagrams = {{100, false, std::byte{1}}, {1200, true, std::byte{2}}, {40, false, std::byte{3}}};
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.log, (std::vector<std::string>{"readable 0", "datagram 100", "datagram 1200",
                                                 "datagram 40"}));
  ASSERT_EQ(f.rec.sent.size(), 3u);
  EXPECT_EQ(f.rec.sent[1], std::vector<std::byte>(1200, std::byte{2}));
  EXPECT_EQ(f.rec.sent_low_priority, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(f.driver.stats().datagrams_sent, 3u);
  EXPECT_EQ(f.driver.stats().low_priority_sent, 1u);
  EXPECT_TRUE(f.conn.datagrams.empty());
}

// A turn hands out its budget and asks to be resumed; the next turns go on
// where it stopped, in order, and a turn that ends dry asks for nothing.
TEST(ConnectionDriver, ATurnSendsItsBudgetThenAsksToBeResumed) {
  DriverLimits limits;
  limits.datagrams_per_turn = 2;
  Fixture f(limits);
  f.conn.events = {StreamReadable{0}};
  for (int i = 1; i <= 5; ++i) f.conn.datagrams.push_back({static_cast<std::size_t>(100 + i), false, std::byte(i)});
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.log, (std::vector<std::string>{"readable 0", "datagram 101", "datagram 102"}));
  EXPECT_EQ(f.rec.resumes, 1);
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.sent.size(), 4u);
  EXPECT_EQ(f.rec.resumes, 2);
  f.driver.service(at_ms(1));
  ASSERT_EQ(f.rec.sent.size(), 5u);
  EXPECT_EQ(f.rec.resumes, 2);  // the last datagram left within the budget: nothing to resume
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(f.rec.sent[i].size(), 101 + i);
  EXPECT_FALSE(f.driver.in_service());
}

// No budget (the default, and the simulator's): one service drains all.
TEST(ConnectionDriver, WithoutABudgetOneServiceDrainsEverything) {
  Fixture f;
  for (int i = 1; i <= 300; ++i) f.conn.datagrams.push_back({60, false, std::byte(1)});
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.sent.size(), 300u);
  EXPECT_EQ(f.rec.resumes, 0);
}

// A sink that queues datagrams (the gateway's UDP batch) offers the place
// each one goes: the connection writes (seals) it there and the sink gets a
// span inside it, nothing to copy; a short offer falls back to the driver's
// buffer.
TEST(ConnectionDriver, SealsEachDatagramWhereTheSinkOffers) {
  struct QueueSink final : TransmitSink {
    std::vector<std::byte> queue = std::vector<std::byte>(3 * 1500);
    std::size_t used = 0;
    std::size_t offer_bytes = 1500;
    std::vector<bool> in_place;
    std::span<std::byte> next_buffer() override { return std::span(queue).subspan(used, offer_bytes); }
    void transmit(std::span<const std::byte> datagram, bool) override {
      in_place.push_back(datagram.data() == queue.data() + used);
      if (in_place.back()) used += datagram.size();
    }
  };
  FakeConnection conn;
  Recorder rec;
  QueueSink sink;
  std::vector<std::byte> buffer(1500);
  FakeDriver driver(conn, rec, sink, rec, buffer);
  conn.datagrams = {{100, false, std::byte{1}}, {1200, false, std::byte{2}}};
  driver.service(at_ms(1));
  EXPECT_EQ(sink.in_place, (std::vector<bool>{true, true}));
  EXPECT_EQ(sink.used, 1300u);
  EXPECT_EQ(sink.queue[99], std::byte{1});
  EXPECT_EQ(sink.queue[100 + 1199], std::byte{2});
  sink.offer_bytes = 1000;  // smaller than the driver's buffer: not used
  conn.datagrams = {{40, false, std::byte{3}}};
  driver.service(at_ms(2));
  EXPECT_EQ(sink.in_place, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(buffer[39], std::byte{3});
}

TEST(ConnectionDriver, OnDatagramFeedsTheConnectionThenServices) {
  Fixture f;
  std::vector<std::byte> in(10, std::byte{9});
  f.conn.datagrams = {{20, false, std::byte{5}}};
  f.driver.on_datagram(in, at_ms(3));
  ASSERT_EQ(f.conn.received.size(), 1u);
  EXPECT_EQ(f.conn.received[0], in);
  EXPECT_EQ(f.rec.sent.size(), 1u);
}

TEST(ConnectionDriver, ArmsTheTimerOnlyWhenTheDeadlineIsEarlier) {
  Fixture f;
  f.driver.service(at_ms(0));
  EXPECT_TRUE(f.rec.armed.empty());  // no deadline, no timer

  f.conn.timeout = at_ms(10);
  f.driver.service(at_ms(1));
  EXPECT_EQ(f.rec.armed, (std::vector<Instant>{at_ms(10)}));

  f.conn.timeout = at_ms(20);  // later: the armed timer fires early and re-arms then
  f.driver.service(at_ms(2));
  f.driver.service(at_ms(2));
  EXPECT_EQ(f.rec.armed.size(), 1u);

  f.conn.timeout = at_ms(5);  // earlier: re-arm
  f.driver.service(at_ms(3));
  EXPECT_EQ(f.rec.armed, (std::vector<Instant>{at_ms(10), at_ms(5)}));
  EXPECT_EQ(f.driver.armed_deadline(), at_ms(5));

  f.conn.timeout = at_ms(1);  // already past: clamped to now
  f.driver.service(at_ms(4));
  EXPECT_EQ(f.rec.armed.back(), at_ms(4));
  EXPECT_EQ(f.driver.stats().timers_armed, 3u);
  EXPECT_TRUE(f.conn.timeouts_called.empty());  // service never fires timeouts itself
}

TEST(ConnectionDriver, ATimerThatFiresEarlyReArmsWithoutCallingOnTimeout) {
  Fixture f;
  f.conn.timeout = at_ms(10);
  f.driver.service(at_ms(0));
  f.conn.timeout = at_ms(25);  // moved later after arming
  f.driver.on_timer(at_ms(10));
  EXPECT_TRUE(f.conn.timeouts_called.empty());
  EXPECT_EQ(f.rec.armed, (std::vector<Instant>{at_ms(10), at_ms(25)}));

  f.conn.datagrams = {{30, false, std::byte{1}}};  // what the timeout sends (e.g. a PTO probe)
  f.driver.on_timer(at_ms(25));
  EXPECT_EQ(f.conn.timeouts_called, (std::vector<Instant>{at_ms(25)}));
  EXPECT_EQ(f.rec.sent.size(), 1u);  // on_timer services
  EXPECT_EQ(f.driver.stats().timeouts, 1u);
  EXPECT_FALSE(f.driver.armed_deadline());  // the timeout cleared the deadline

  f.driver.on_timer(at_ms(30));  // a timer whose deadline went away: nothing
  EXPECT_EQ(f.conn.timeouts_called.size(), 1u);
}

TEST(ConnectionDriver, AHandlerServicingFromInsideDispatchGetsAnotherRoundNotRecursion) {
  Fixture f;
  int depth = 0;
  int max_depth = 0;
  f.rec.on_readable = [&](const StreamReadable&) {
    ++depth;
    max_depth = std::max(max_depth, depth);
    EXPECT_TRUE(f.driver.in_service());
    // The app reads and answers: the connection has a datagram to send.
    f.conn.datagrams.push_back({10, false, std::byte{1}});
    f.driver.service(at_ms(1));  // "send now": must not recurse
    --depth;
  };
  // Sending the answer makes another event (once): it is dispatched in the
  // next round of the same service().
  bool once = false;
  f.conn.on_drained = [&] {
    if (!once) f.conn.events.push_back(StreamReadable{4});
    once = true;
  };
  f.conn.events = {StreamReadable{0}};
  f.driver.service(at_ms(1));
  EXPECT_EQ(max_depth, 1);
  EXPECT_EQ(f.rec.log, (std::vector<std::string>{"readable 0", "datagram 10", "readable 4",
                                                 "datagram 10"}));
  EXPECT_FALSE(f.driver.in_service());
}

TEST(ConnectionDriver, SpinGuardTransmit) {
  Fixture f(DriverLimits{.max_datagrams_per_flush = 50});
  f.conn.endless_datagrams = true;
  EXPECT_THROW(f.driver.service(at_ms(1)), std::logic_error);
  EXPECT_EQ(f.rec.sent.size(), 50u);
  EXPECT_FALSE(f.driver.in_service());  // usable after the throw
  f.conn.endless_datagrams = false;
  f.conn.events = {StreamReadable{0}};
  f.driver.service(at_ms(2));
  EXPECT_EQ(f.rec.log.back(), "readable 0");
}

TEST(ConnectionDriver, SpinGuardTimeoutThatStaysDue) {
  Fixture f(DriverLimits{.max_timeouts_per_instant = 5});
  f.conn.timeout = at_ms(10);
  f.conn.on_timeout_hook = [](Instant) {};  // bug: the deadline stays due
  f.driver.service(at_ms(0));
  int fired = 0;
  EXPECT_THROW(
      while (auto deadline = f.driver.armed_deadline()) {
        ++fired;
        f.driver.on_timer(*deadline);
      },
      std::logic_error);
  EXPECT_EQ(f.conn.timeouts_called.size(), 5u);
  EXPECT_EQ(fired, 6);

  // Timeouts at successive instants are not a spin.
  Fixture g(DriverLimits{.max_timeouts_per_instant = 2});
  g.conn.on_timeout_hook = [&](Instant now) { g.conn.timeout = now + ms(1); };
  g.conn.timeout = at_ms(1);
  g.driver.service(at_ms(0));
  for (int i = 0; i < 20; ++i) g.driver.on_timer(*g.driver.armed_deadline());
  EXPECT_EQ(g.conn.timeouts_called.size(), 20u);
}

TEST(ConnectionDriver, SpinGuardServiceRounds) {
  Fixture f(DriverLimits{.max_service_rounds = 100});
  // A handler and the core that keep waking each other up at one instant:
  // every event makes the handler ask for service, every drain makes an event.
  f.rec.on_readable = [&](const StreamReadable&) { f.driver.service(at_ms(1)); };
  f.conn.on_drained = [&] { f.conn.events.push_back(StreamReadable{0}); };
  f.conn.events = {StreamReadable{0}};
  EXPECT_THROW(f.driver.service(at_ms(1)), std::logic_error);
  EXPECT_EQ(f.driver.stats().events, 100u);
  EXPECT_FALSE(f.driver.in_service());
}

TEST(ConnectionDriver, SpinGuardEventsThatNeverRunDry) {
  Fixture f(DriverLimits{.max_events_per_round = 64});
  // Bug: handling an event makes the same event again, inside one dispatch.
  f.rec.on_readable = [&](const StreamReadable& e) { f.conn.events.push_back(StreamReadable{e.id}); };
  f.conn.events = {StreamReadable{0}};
  EXPECT_THROW(f.driver.service(at_ms(1)), std::logic_error);
  EXPECT_EQ(f.driver.stats().events, 64u);
  EXPECT_FALSE(f.driver.in_service());
}

// Two real Connections, each behind a ConnectionDriver, with a zero-delay
// in-memory network and a manual clock: the loop as the gateway runs it.
struct RealSide final : ConnectionEventHandler, TransmitSink, DriverTimer {
  RealSide(bool is_client, DriverLimits limits = {}) {
    ConnectionConfig config;
    config.is_client = is_client;
    conn = std::make_unique<Connection>(config, std::make_unique<TestProtection>(testing::kKey),
                                        nullptr, Instant{});
    driver = std::make_unique<ConnectionDriver>(*conn, *this, *this, *this, buffer, limits);
  }
  void on_stream_opened(const StreamOpened& e, Instant) override { opened.push_back(e.id); }
  void on_stream_readable(const StreamReadable& e, Instant now) override {
    std::vector<std::byte> chunk(4096);
    bool fin = false;
    for (;;) {
      const std::size_t n = conn->stream_read(e.id, chunk, &fin, now);
      if (n == 0) break;
      received.insert(received.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
    }
    got_fin = got_fin || fin;
    driver->service(now);  // the read opened the window: re-entrant flush
  }
  void transmit(std::span<const std::byte> datagram, bool) override {
    outbox.emplace_back(datagram.begin(), datagram.end());
  }
  void arm(Instant deadline) override { timer = deadline; }
  void resume_soon() override {}  // no turn budget here

  std::vector<std::byte> buffer = std::vector<std::byte>(2048);
  std::unique_ptr<Connection> conn;
  std::unique_ptr<ConnectionDriver> driver;
  std::vector<std::vector<std::byte>> outbox;
  std::optional<Instant> timer;
  std::vector<StreamId> opened;
  std::vector<std::byte> received;
  bool got_fin = false;
};

TEST(ConnectionDriver, CarriesAStreamBetweenTwoRealConnections) {
  RealSide client(true), hub(false);
  Instant now{};
  const auto data = testing::pattern(200'000, 1);
  const auto id = client.conn->open_stream(testing::destination_at(1, 80), ContentClass::bulk, now);
  ASSERT_TRUE(id);
  std::size_t written = 0;
  for (int step = 0; step < 20'000 && !hub.got_fin; ++step) {
    if (written < data.size()) {
      written += client.conn->stream_write(
          *id, std::span<const std::byte>(data).subspan(written), now);
      if (written == data.size()) client.conn->stream_finish(*id, now);
    }
    client.driver->service(now);
    // Deliver everything in flight (zero delay), both ways, until quiet.
    while (!client.outbox.empty() || !hub.outbox.empty()) {
      for (auto [from, to] : {std::pair{&client, &hub}, std::pair{&hub, &client}}) {
        auto batch = std::move(from->outbox);
        from->outbox.clear();
        for (auto& d : batch) to->driver->on_datagram(d, now);
      }
    }
    now += ms(1);
    for (RealSide* side : {&client, &hub}) {
      if (side->timer && *side->timer <= now) {
        side->timer.reset();
        side->driver->on_timer(now);
      }
    }
  }
  EXPECT_EQ(hub.opened, (std::vector<StreamId>{*id}));
  EXPECT_TRUE(hub.got_fin);
  EXPECT_EQ(hub.received, data);
  EXPECT_GT(client.driver->stats().datagrams_sent, 150u);
  EXPECT_GT(hub.driver->stats().datagrams_sent, 0u);  // ACKs
}

TEST(ConnectionDriver, SpinGuardFiresOnARealConnectionWithATinyFlushLimit) {
  // A scripted case: a real connection with a full initial window to send
  // exceeds a flush limit of 3 datagrams, which the guard reports.
  RealSide client(true, DriverLimits{.max_datagrams_per_flush = 3});
  const auto id = client.conn->open_stream(testing::destination_at(1, 80), ContentClass::bulk, Instant{});
  ASSERT_TRUE(id);
  const auto data = testing::pattern(64'000, 2);
  client.conn->stream_write(*id, data, Instant{});
  EXPECT_THROW(client.driver->service(Instant{}), std::logic_error);
  EXPECT_EQ(client.outbox.size(), 3u);
}

}  // namespace
}  // namespace egw::tunnel
