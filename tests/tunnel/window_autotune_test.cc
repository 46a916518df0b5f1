// Receive windows that grow with the path (issue 20 item 5): WindowTuner in
// RecvStream (MAX_STREAM_DATA) and RecvCredit (MAX_DATA), and a send buffer
// that follows the peer's credit.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tunnel/flow_control.h"
#include "tunnel/recv_stream.h"
#include "tunnel/send_stream.h"

namespace egw::tunnel {
namespace {

constexpr Duration kRtt = ms(100);

// A peer that always sends up to the credit, and a reader that reads
// `read_bytes` every `read_interval`; returns the window after `rounds`
// reads.
ByteCount stream_window_after(ByteCount window, ByteCount max_window, ByteCount read_bytes,
                              Duration read_interval, int rounds) {
  RecvStream r(window, 0, nullptr, max_window);
  std::vector<std::byte> data(std::max(window, max_window));
  std::vector<std::byte> out(read_bytes);
  std::uint64_t sent = 0;
  Instant now = instant_at(ms(1));
  for (int i = 0; i < rounds; ++i) {
    const std::uint64_t credit = r.max_stream_data() - sent;
    EXPECT_EQ(r.on_stream_frame(sent, std::span(data).first(credit), false).status,
              RecvStream::Status::ok);
    sent += credit;
    r.read(out, nullptr);
    r.take_credit_update(now, kRtt);
    now += read_interval;
  }
  return r.window();
}

TEST(WindowAutotune, StreamWindowGrowsWhenTheReaderKeepsUp) {
  // Half a window read every 50 ms, well within two RTTs: it doubles per update.
  EXPECT_EQ(stream_window_after(1000, 64'000, 500, ms(50), 2), 2000u);
  EXPECT_GE(stream_window_after(1000, 64'000, 100'000, ms(50), 10), 64'000u);
}

TEST(WindowAutotune, StreamWindowStaysWhenTheReaderIsSlow) {
  // Half a window read every 250 ms: more than two RTTs per update.
  EXPECT_EQ(stream_window_after(1000, 64'000, 500, ms(250), 50), 1000u);
}

TEST(WindowAutotune, StreamWindowNeverPassesItsMaximum) {
  EXPECT_EQ(stream_window_after(1000, 8'000, 100'000, ms(10), 100), 8000u);
  // Without a maximum (0) the window is fixed, as before.
  EXPECT_EQ(stream_window_after(1000, 0, 100'000, ms(10), 100), 1000u);
}

TEST(WindowAutotune, StreamCreditNeverExceedsReadOffsetPlusMaximum) {
  RecvStream r(1000, 0, nullptr, 4000);
  std::vector<std::byte> data(4000);
  std::vector<std::byte> out(4000);
  std::uint64_t sent = 0;
  Instant now = instant_at(ms(1));
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t credit = r.max_stream_data() - sent;
    ASSERT_EQ(r.on_stream_frame(sent, std::span(data).first(credit), false).status,
              RecvStream::Status::ok);
    sent += credit;
    // What the peer may put in our buffer: never more than the maximum.
    EXPECT_LE(r.max_stream_data() - r.read_offset(), 4000u);
    r.read(out, nullptr);
    r.take_credit_update(now, kRtt);
    now += ms(5);
  }
}

TEST(WindowAutotune, ConnectionWindowGrowsWhenConsumedFastAndNotWhenSlow) {
  auto window_after = [](Duration interval) {
    RecvCredit credit(1000, 1000, 32'000);
    Instant now = instant_at(ms(1));
    for (int i = 0; i < 50; ++i) {
      // The peer fills the credit; the application reads half a window.
      const std::uint64_t half = credit.window() / 2;
      EXPECT_TRUE(credit.on_received(half));
      credit.on_consumed(half);
      credit.take_update(now, kRtt);
      now += interval;
    }
    return credit.window();
  };
  EXPECT_EQ(window_after(ms(50)), 32'000u);  // bounded by its maximum
  EXPECT_EQ(window_after(ms(300)), 1000u);
}

TEST(WindowAutotune, SendBufferFollowsThePeersCreditWithinItsBounds) {
  SendStream s(1000, 1000, nullptr, 8000);
  EXPECT_EQ(s.capacity_bytes(), 1000u);
  s.on_max_stream_data(5000);
  EXPECT_EQ(s.capacity_bytes(), 5000u);  // the peer lets us have 5000 in flight
  s.on_max_stream_data(100'000);
  EXPECT_EQ(s.capacity_bytes(), 8000u);  // never above the maximum
  SendStream fixed(1000, 1000);
  fixed.on_max_stream_data(100'000);
  EXPECT_EQ(fixed.capacity_bytes(), 1000u);  // no maximum: fixed
}

TEST(WindowAutotune, SendBufferGrowthSignalsAWriterThatWasBlocked) {
  SendStream s(1000, 1000, nullptr, 8000);
  std::vector<std::byte> data(2000);
  EXPECT_EQ(s.write(data), 1000u);  // cut short
  EXPECT_FALSE(s.take_writable_signal());
  s.on_max_stream_data(3000);
  EXPECT_TRUE(s.take_writable_signal());
  EXPECT_EQ(s.write(data), 2000u);
}

}  // namespace
}  // namespace egw::tunnel
