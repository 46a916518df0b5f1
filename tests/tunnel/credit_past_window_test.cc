// Acknowledgements and credit never wait behind data (issue 20 item 4): a
// side whose window is full of its own upload still gives the peer's
// download its credit (MAX_STREAM_DATA, MAX_DATA) at once, in a packet past
// the window, with the ACK; and only when credit changed.
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/test_protection.h"
#include "tunnel/connection.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {
namespace {

constexpr std::uint64_t kKey = 0x5eed'cafe'f00d'4321;

struct Sent {
  std::vector<std::vector<std::byte>> datagrams;
  int stream_frames = 0;
  int credit_frames = 0;  // MAX_STREAM_DATA or MAX_DATA
  int ack_frames = 0;
};

Sent drain(Connection& c, Instant now) {
  Sent out;
  std::vector<std::byte> buffer(1500);
  while (auto t = c.poll_transmit(now, buffer)) {
    std::vector<std::byte> d(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(t->bytes));
    std::vector<std::byte> copy = d;
    TestProtection p(kKey);
    auto opened = open_packet(p, copy);
    EXPECT_TRUE(opened);
    if (opened) {
      for (const Frame& f : parse_frames(opened->payload).value_or(std::vector<Frame>{})) {
        out.stream_frames += std::holds_alternative<StreamFrame>(f);
        out.credit_frames += std::holds_alternative<MaxStreamDataFrame>(f) || std::holds_alternative<MaxDataFrame>(f);
        out.ack_frames += std::holds_alternative<AckFrame>(f);
      }
    }
    out.datagrams.push_back(std::move(d));
  }
  return out;
}

void deliver(Connection& to, Sent& sent, Instant now) {
  for (auto& d : sent.datagrams) to.on_datagram(d, now);
}

TEST(CreditPastWindow, CreditGoesOutWhileTheWindowIsFullOfData) {
  ConnectionConfig branch_config;
  branch_config.is_client = true;
  // The initial credit: no announcement, so what the read frees is the update.
  branch_config.stream_receive_window_bytes = kInitialStreamCreditBytes;
  ConnectionConfig hub_config = branch_config;
  hub_config.is_client = false;
  Instant now = instant_at(ms(1));
  Connection branch(branch_config, std::make_unique<TestProtection>(kKey), nullptr, now);
  Connection hub(hub_config, std::make_unique<TestProtection>(kKey), nullptr, now);

  // The branch uploads: its initial window (10 packets) leaves, unacknowledged.
  const StreamId up = *branch.open_stream(Destination{}, ContentClass::bulk, now);
  const std::vector<std::byte> bulk(1 << 20);
  branch.stream_write(up, bulk, now);
  Sent upload = drain(branch, now);
  ASSERT_GE(upload.stream_frames, 5);
  // The hub downloads to the branch on its own stream, within the 16 KiB
  // the branch is assumed to allow before its first MAX_STREAM_DATA.
  const StreamId down = *hub.open_stream(Destination{}, ContentClass::bulk, now);
  hub.stream_write(down, bulk, now);
  Sent download = drain(hub, now);
  ASSERT_GT(download.stream_frames, 0);

  // The branch receives the download (its upload is still unacknowledged:
  // its window is full) and reads it: credit is due.
  now += ms(20);
  deliver(branch, download, now);
  while (branch.poll_event()) {
  }
  std::vector<std::byte> sink(1 << 20);
  bool fin = false;
  EXPECT_GT(branch.stream_read(down, sink, &fin, now), 0u);
  Sent answer = drain(branch, now);
  EXPECT_EQ(answer.stream_frames, 0) << "no data past the window";
  EXPECT_GE(answer.credit_frames, 1) << "the download's credit waited behind the upload's window";
  EXPECT_GE(answer.ack_frames, 1);
  EXPECT_LE(answer.datagrams.size(), 1u) << "one packet per credit change";
  EXPECT_EQ(branch.stats().credit_packets_past_window, 1u);
  // Nothing more until credit changes again.
  EXPECT_EQ(drain(branch, now).datagrams.size(), 0u);
}

}  // namespace
}  // namespace egw::tunnel
