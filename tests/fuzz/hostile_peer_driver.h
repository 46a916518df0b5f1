// HostilePeerDriver: an authenticated but hostile client (it holds the key)
// playing against a hub-side Connection, following a script of operations
// read from bytes. Shared by tests/fuzz/connection_fuzz.cc (libFuzzer picks
// the bytes) and tests/tunnel/hostile_peer_test.cc (ScriptBuilder writes them).
//
// Script: one config byte, then operations until the input runs out or
// kMaxOps ran. Every field reads as 0 once the input is exhausted.
//   op byte % 8
//   0 sealed:     pn-selector, u16 length, payload  (sealed with the key, so
//                 it authenticates and reaches frame parsing)
//   1 raw:        u16 length, datagram              (sent as is)
//   2 advance:    u8 unit, u16 amount               (fires due timers)
//   3 transmit:   poll_transmit until empty
//   4 events:     u8 policy                         (drain; read, write, finish, reset)
//   5 generated:  pn-selector, u8 count, frames     (frames built from input bytes:
//                 reach for the fuzzer, see generate_frame)
//   6 ack sent:   pn-selector, u8 mask, u8 delay    (ACK packets the hub really sent)
//   7 app:        u8 action, u8 arg                 (hub opens, writes, closes...)
// pn-selector: < 0xc0 the next number; 0xc0..0xdf a recent one again;
// 0xe0..0xfe jump ahead by 2^(s & 0x1f); 0xff an explicit u64.
// Datagram flows: generated frames include FLOW_OPEN (any class, the
// categories too), DATAGRAM (pattern bytes of the flow) and FLOW_CLOSE; the
// app echoes or closes peer flows and opens its own (app action 0, arg >=
// 0xf0). Datagram bytes are pattern bytes of (flow, 0) like stream bytes.
//
// The model the checks rely on: stream bytes the driver sends (in either
// direction) are pattern bytes of (stream, offset), so any byte delivered to
// the wrong stream or offset is seen; a stream the script fed other bytes
// (a hand-made payload) is "tainted" and only its length is trusted.
//
// Checked after every operation (check() returns the first violation):
// stats counters never go down and the drop reasons add up; every datagram
// the hub sends fits max_datagram_bytes, authenticates, parses, and has a
// packet number above the last; nothing is sent after the CLOSE; is_closed()
// matches one ConnectionClosed event; peer streams alive never exceed
// max_incoming_streams; StreamOpened once per id, with the peer's parity;
// FlowOpened with the peer's parity and not for an open flow, DATAGRAMs
// delivered only on flows the app was told about (or opened), with the
// bytes sent, the hub's own DATAGRAMs carrying what its app sent there;
// peer flows open never exceed max_incoming_flows;
// timers make progress (after on_timeout and a transmit, next_timeout is not
// in the past for long) and virtual time and work per input are bounded.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "congestion/temporal_cache.h"
#include "tunnel/connection.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"
#include "tests/support/test_protection.h"
#include "tunnel/varint.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel::fuzzing {

inline constexpr std::uint64_t kHostileKey = 0x5eed'cafe'f00d'1234;
inline constexpr std::size_t kMaxOps = 512;
inline constexpr std::size_t kMaxChunkBytes = 4096;
inline constexpr std::size_t kMaxDatagramsPerTransmit = 2048;
inline constexpr Duration kMaxVirtualTime = ms(30 * 60 * 1000);  // 30 minutes
inline constexpr std::size_t kMaxReadPerEventBytes = 256 * 1024;
inline constexpr std::size_t kMaxDatagramBytesAccepted = 8192;

enum class Op : std::uint8_t {
  sealed = 0, raw = 1, advance = 2, transmit = 3, events = 4, generated = 5, ack_sent = 6,
  app = 7,
};

// Stream bytes are a function of (stream, offset): client data and hub data
// use different salts so a byte echoed into the wrong direction shows too.
inline std::byte pattern_byte(StreamId id, std::uint64_t offset, std::uint8_t salt) {
  const std::uint64_t x = (id + 1) * 0x9e3779b97f4a7c15ull ^ (offset * 0xff51afd7ed558ccdull);
  return static_cast<std::byte>((x >> 29) ^ (x >> 7) ^ salt);
}
inline constexpr std::uint8_t kClientSalt = 0x00;
inline constexpr std::uint8_t kHubSalt = 0xa5;

inline std::vector<std::byte> pattern_bytes(StreamId id, std::uint64_t offset, std::size_t n,
                                            std::uint8_t salt) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(id, offset + i, salt);
  return v;
}

// Config byte bits.
inline constexpr std::uint8_t kCfgFewStreams = 0x01;      // max_incoming_streams = 8
inline constexpr std::uint8_t kCfgSmallWindows = 0x02;    // 16 KiB stream, 64 KiB conn windows
inline constexpr std::uint8_t kCfgLargeDatagrams = 0x04;  // 1452 instead of 1200
inline constexpr std::uint8_t kCfgAckEveryPacket = 0x08;
inline constexpr std::uint8_t kCfgCouplingNone = 0x10;
inline constexpr std::uint8_t kCfgCubicPaced = 0x20;
inline constexpr std::uint8_t kCfgTemporalCache = 0x40;
inline constexpr std::uint8_t kCfgNoInitialStreams = 0x80;  // else 0, 2, 4 are open

inline ConnectionConfig hub_config(std::uint8_t cfg) {
  ConnectionConfig c;
  c.is_client = false;
  // Scripts pack up to kMaxChunkBytes of frames into one packet; the hub
  // accepts them (a bigger datagram is dropped as oversized).
  c.max_receive_datagram_bytes = kMaxDatagramBytesAccepted;
  if (cfg & kCfgFewStreams) c.max_incoming_streams = 8;
  if (cfg & kCfgSmallWindows) {
    c.stream_receive_window_bytes = 16 * 1024;
    c.connection_receive_window_bytes = 64 * 1024;
    c.stream_send_buffer_bytes = 64 * 1024;
  }
  if (cfg & kCfgLargeDatagrams) c.max_datagram_bytes = 1452;
  if (cfg & kCfgAckEveryPacket) c.ack_every_packets = 1;
  if (cfg & kCfgCouplingNone) c.ensemble.coupling = congestion::CouplingMode::none;
  if (cfg & kCfgCubicPaced) {
    c.ensemble.law = congestion::WindowLawKind::cubic;
    c.ensemble.join = congestion::JoinMode::paced;
    c.ensemble.slow_start = congestion::SlowStart::hystart_pp;
  }
  return c;
}

// Reads fields off the script; 0 once exhausted.
class ScriptReader {
 public:
  explicit ScriptReader(std::span<const std::byte> input) : input_(input) {}
  bool done() const { return pos_ >= input_.size(); }
  std::uint8_t u8() { return done() ? 0 : std::to_integer<std::uint8_t>(input_[pos_++]); }
  std::uint16_t u16() {
    const std::uint16_t high = u8();  // two statements: operand order is unspecified
    return static_cast<std::uint16_t>((high << 8) | u8());
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return v;
  }
  std::span<const std::byte> chunk(std::size_t n) {
    n = std::min(n, input_.size() - pos_);
    auto s = input_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const std::byte> input_;
  std::size_t pos_ = 0;
};

struct SentStreamRecord {
  std::uint64_t highest_end = 0;  // highest offset + length the hub sent
  bool fin = false;
  bool reset = false;  // the hub sent a RESET for it
};

inline std::optional<StreamId> stream_id_of(const Frame& frame) {
  return std::visit(
      [](const auto& f) -> std::optional<StreamId> {
        if constexpr (requires { f.stream_id; }) return f.stream_id;
        return std::nullopt;
      },
      frame);
}

class HostilePeerDriver {
 public:
  explicit HostilePeerDriver(std::span<const std::byte> script) : in_(script) {
    cfg_ = in_.u8();
    config_ = hub_config(cfg_);
    if (cfg_ & kCfgTemporalCache) cache_ = std::make_unique<congestion::TemporalCache>();
    hub_ = std::make_unique<Connection>(config_, std::make_unique<TestProtection>(kHostileKey),
                                        cache_.get(), now_);
    peer_protection_ = std::make_unique<TestProtection>(kHostileKey);
    verify_protection_ = std::make_unique<TestProtection>(kHostileKey);
    last_stats_ = hub_->stats();
    if (!(cfg_ & kCfgNoInitialStreams)) open_initial_streams();
  }

  // Runs the whole script; the first invariant violation, or nullopt.
  std::optional<std::string> run() {
    for (std::size_t ops = 0; ops < kMaxOps && !in_.done() && !violation_; ++ops) step();
    // Settle: send what is due and let the app read, then check once more.
    if (!violation_) transmit();
    if (!violation_) drain_events(0x55);
    if (!violation_) transmit();
    check();
    return violation_;
  }

  Connection& hub() { return *hub_; }
  const ConnectionConfig& config() const { return config_; }
  Instant now() const { return now_; }
  std::optional<PacketNumber> last_sent_packet_number() const { return last_sent_pn_; }

  // What the run observed, for tests to assert on.
  std::vector<ConnectionEvent> events;          // every event, in order
  std::vector<Frame> sent_frames_owned;         // non-STREAM frames the hub sent
  std::vector<std::byte> transmit_buffer_ = std::vector<std::byte>(64 * 1024);
  std::vector<CloseFrame> sent_closes;          // CLOSE frames the hub sent
  std::vector<ResetStreamFrame> sent_resets;    // RESET frames the hub sent
  std::map<StreamId, std::uint64_t> sent_max_stream_data;  // latest MAX_STREAM_DATA
  std::map<StreamId, SentStreamRecord> sent_streams;
  std::map<StreamId, std::uint64_t> read_bytes;  // what the app read per stream
  std::set<StreamId> fin_read;
  std::size_t datagrams_out = 0;
  std::size_t max_peer_streams_alive = 0;
  std::size_t sent_datagram_frames = 0;       // DATAGRAM frames the hub sent
  std::map<FlowId, std::size_t> datagrams_read;  // DatagramReceived per flow

 private:
  // ------------------------------------------------------------ operations
  void step() {
    switch (static_cast<Op>(in_.u8() % 8)) {
      case Op::sealed: {
        const PacketNumber pn = pick_packet_number();
        const auto payload = in_.chunk(std::min<std::size_t>(in_.u16(), kMaxChunkBytes));
        deliver_sealed(pn, payload);
        break;
      }
      case Op::raw: {
        const auto bytes = in_.chunk(std::min<std::size_t>(in_.u16(), kMaxChunkBytes));
        deliver(bytes);
        break;
      }
      case Op::advance: {
        const std::uint8_t unit = in_.u8();
        const std::uint16_t amount = in_.u16();
        // unit % 3: microseconds, milliseconds, 100 ms steps.
        const std::int64_t scale[] = {1, 1000, 100'000};
        advance(Duration(static_cast<std::int64_t>(amount) * scale[unit % 3]));
        break;
      }
      case Op::transmit:
        transmit();
        break;
      case Op::events:
        drain_events(in_.u8());
        break;
      case Op::generated: {
        const PacketNumber pn = pick_packet_number();
        const std::size_t count = 1 + in_.u8() % 8;
        std::vector<std::byte> payload;
        for (std::size_t i = 0; i < count; ++i) generate_frame(payload);
        deliver_sealed(pn, payload);
        break;
      }
      case Op::ack_sent: {
        const PacketNumber pn = pick_packet_number();
        const std::uint8_t mask = in_.u8();
        const std::uint8_t delay = in_.u8();
        std::vector<std::byte> payload;
        if (auto ack = ack_of_sent(mask, delay)) {
          WireWriter w(payload);
          encode_frame(w, *ack);
        } else {
          payload.push_back(std::byte{0x01});  // nothing sent yet: a PING
        }
        deliver_sealed(pn, payload);
        break;
      }
      case Op::app: {
        const std::uint8_t action = in_.u8();
        app_action(action, in_.u8());
        break;
      }
    }
    check();
  }

  PacketNumber pick_packet_number() {
    const std::uint8_t s = in_.u8();
    PacketNumber pn;
    if (s < 0xc0) {
      pn = next_pn_++;
    } else if (s < 0xe0) {
      const std::size_t back = s & 0x1f;
      pn = used_pns_.empty() ? next_pn_++ : used_pns_[used_pns_.size() - 1 - back % used_pns_.size()];
    } else if (s < 0xff) {
      next_pn_ += std::uint64_t{1} << (s & 0x1f);
      pn = next_pn_++;
    } else {
      pn = in_.u64();  // may exceed 2^62 - 1: the layout check must refuse it
    }
    used_pns_.push_back(pn);
    if (used_pns_.size() > 64) used_pns_.erase(used_pns_.begin());
    return pn;
  }

  void deliver_sealed(PacketNumber pn, std::span<const std::byte> payload) {
    if (payload.empty()) payload = std::as_bytes(std::span("\x01", 1));  // a PING
    const PacketHeader header{PacketType::data, 0, pn};
    // seal_packet does not care about the number's range; the receiver does.
    deliver(seal_packet(*peer_protection_, header, payload));
  }

  void deliver(std::span<const std::byte> datagram) {
    note_peer_frames(datagram);
    const bool was_closed = hub_->is_closed();
    const std::uint64_t before = hub_->stats().datagrams_received;
    std::vector<std::byte> copy(datagram.begin(), datagram.end());  // opened in place
    hub_->on_datagram(copy, now_);
    const std::uint64_t after = hub_->stats().datagrams_received;
    if (after != before + (was_closed ? 0 : 1)) fail("datagrams_received did not count a datagram");
  }

  // Taints streams that the peer fed bytes other than the pattern (hand-made
  // or fuzzed payloads), so the content check only applies to the others.
  void note_peer_frames(std::span<const std::byte> bytes) {
    std::vector<std::byte> datagram(bytes.begin(), bytes.end());
    auto opened = open_packet(*verify_protection_, datagram);
    if (!opened) return;
    auto frames = parse_frames(opened->payload);
    if (!frames) return;
    for (const Frame& f : *frames) {
      if (auto id = stream_id_of(f); id && *id % 2 == 0) peer_ids_.insert(*id);
      if (const auto* s = std::get_if<StreamFrame>(&f)) {
        for (std::size_t i = 0; i < s->data.size(); ++i) {
          if (s->data[i] != pattern_byte(s->stream_id, s->offset + i, kClientSalt)) {
            tainted_.insert(s->stream_id);
            break;
          }
        }
        std::uint64_t& end = peer_next_offset_[s->stream_id];
        end = std::max(end, s->offset + s->data.size());
      }
      if (const auto* d = std::get_if<DatagramFrame>(&f)) {
        if (!std::ranges::equal(d->data, pattern_bytes(d->flow_id, 0, d->data.size(), kClientSalt))) {
          tainted_flows_.insert(d->flow_id);
        }
      }
    }
  }

  void advance(Duration amount) {
    if (now_ + amount > start_ + kMaxVirtualTime) amount = start_ + kMaxVirtualTime - now_;
    const Instant target = now_ + amount;
    int stuck = 0;
    for (int i = 0; i < 100'000; ++i) {
      const auto t = hub_->next_timeout();
      if (!t || *t > target) break;
      if (*t <= now_) {
        // Fired at this instant already and still due: at most a few rounds.
        if (++stuck > 4) return fail("next_timeout stays in the past after on_timeout");
      } else {
        stuck = 0;
        now_ = *t;
      }
      hub_->on_timeout(now_);
      transmit();
      if (violation_) return;
    }
    now_ = target;
  }

  void transmit() {
    for (std::size_t i = 0; i < kMaxDatagramsPerTransmit; ++i) {
      auto t = hub_->poll_transmit(now_, transmit_buffer_);
      if (!t) return;
      inspect_sent(std::vector<std::byte>(
          transmit_buffer_.begin(), transmit_buffer_.begin() + static_cast<std::ptrdiff_t>(t->bytes)));
      if (violation_) return;
    }
  }

  void inspect_sent(std::vector<std::byte> bytes) {
    ++datagrams_out;
    if (close_sent_) return fail("datagram sent after the CLOSE");
    if (bytes.size() > config_.max_datagram_bytes) return fail("datagram over max_datagram_bytes");
    auto opened = open_packet(*verify_protection_, bytes);
    if (!opened) return fail("sent datagram does not authenticate");
    const PacketNumber pn = opened->header.packet_number;
    if (last_sent_pn_ && pn <= *last_sent_pn_) return fail("sent packet numbers not increasing");
    last_sent_pn_ = pn;
    auto frames = parse_frames(opened->payload);
    if (!frames) return fail("sent datagram does not parse");
    for (const Frame& f : *frames) {
      if (const auto* s = std::get_if<StreamFrame>(&f)) {
        SentStreamRecord& r = sent_streams[s->stream_id];
        r.highest_end = std::max(r.highest_end, s->offset + s->data.size());
        r.fin = r.fin || s->fin;
        for (std::size_t i = 0; i < s->data.size(); ++i) {
          if (s->data[i] != pattern_byte(s->stream_id, s->offset + i, kHubSalt)) {
            return fail("hub sent bytes the app never wrote there");
          }
        }
        continue;
      }
      if (const auto* c = std::get_if<CloseFrame>(&f)) {
        sent_closes.push_back(*c);
        close_sent_ = true;
        if (frames->size() != 1) return fail("CLOSE shares a packet");
      }
      if (const auto* r = std::get_if<ResetStreamFrame>(&f)) {
        sent_resets.push_back(*r);
        sent_streams[r->stream_id].reset = true;
      }
      if (const auto* m = std::get_if<MaxStreamDataFrame>(&f)) {
        sent_max_stream_data[m->stream_id] = m->maximum;
      }
      if (const auto* d = std::get_if<DatagramFrame>(&f)) {
        ++sent_datagram_frames;
        if (!std::ranges::equal(d->data, pattern_bytes(d->flow_id, 0, d->data.size(), kHubSalt))) {
          return fail("hub sent datagram bytes its app never sent on that flow");
        }
        continue;  // its span points into `bytes`: not kept
      }
      if (sent_frames_owned.size() < 100'000) sent_frames_owned.push_back(f);
    }
    recent_sent_pns_.push_back(pn);
    if (recent_sent_pns_.size() > 256) recent_sent_pns_.erase(recent_sent_pns_.begin());
  }

  // An honest-looking ACK of the hub's recent packets; mask bit i (of 8
  // groups of the newest packets) leaves that group out.
  std::optional<AckFrame> ack_of_sent(std::uint8_t mask, std::uint8_t delay) const {
    if (recent_sent_pns_.empty()) return std::nullopt;
    const std::size_t n = recent_sent_pns_.size();
    const std::size_t group = std::max<std::size_t>(1, n / 8);
    std::vector<PacketNumber> acked;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t g = std::min<std::size_t>((n - 1 - i) / group, 7);
      if (!(mask & (1u << g))) acked.push_back(recent_sent_pns_[i]);
    }
    if (acked.empty()) return std::nullopt;
    // Ascending numbers into descending, non-adjacent inclusive ranges.
    AckFrame ack;
    ack.ack_delay = Duration(std::int64_t{delay} * 1000);
    for (auto it = acked.rbegin(); it != acked.rend(); ++it) {
      if (!ack.ranges.empty() && ack.ranges.back().smallest == *it + 1) {
        ack.ranges.back().smallest = *it;
      } else if (ack.ranges.empty() || ack.ranges.back().smallest > *it + 1) {
        if (ack.ranges.size() == kMaxAckRanges) break;
        ack.ranges.push_back({*it, *it});
      }
    }
    return ack;
  }

  // One frame from input bytes: well-formed on the wire, hostile in meaning.
  void generate_frame(std::vector<std::byte>& payload) {
    const std::uint8_t kind = in_.u8() % 16;
    std::optional<Frame> frame;
    switch (kind) {
      case 0: frame = PaddingFrame{1u + in_.u8() % 16}; break;
      case 1: frame = PingFrame{}; break;
      case 2: {
        const std::uint8_t mask = in_.u8();
        if (auto ack = ack_of_sent(mask, in_.u8())) frame = *ack;
        break;
      }
      case 3: {  // arbitrary ranges, often naming packets never sent
        AckFrame ack;
        std::uint64_t largest = in_.u16();
        const std::size_t count = 1 + in_.u8() % 4;
        for (std::size_t i = 0; i < count; ++i) {
          const std::uint64_t len = in_.u8() % 8;
          const std::uint64_t smallest = largest >= len ? largest - len : 0;
          ack.ranges.push_back({smallest, largest});
          if (smallest < 2) break;
          largest = smallest - 2 - std::min<std::uint64_t>(smallest - 2, in_.u8() % 4);
        }
        frame = ack;
        break;
      }
      case 4: {
        StreamOpenFrame f;
        f.stream_id = pick_stream_id();
        f.destination.address = {10, 0, 0, in_.u8()};
        f.destination.port = 443;
        f.class_hint = static_cast<ContentClass>(in_.u8() % 4);
        frame = f;
        break;
      }
      case 5: {
        const StreamId id = pick_stream_id();
        const std::uint64_t offset = pick_offset(id);
        const std::size_t length = in_.u16() % 1400;
        const std::uint8_t flags = in_.u8();
        if (offset + length > kVarintMax) break;
        stream_data_ = pattern_bytes(id, offset, length, kClientSalt);
        frame = StreamFrame{id, offset, (flags & 1) != 0, stream_data_};
        break;
      }
      case 6: {
        const StreamId id = pick_stream_id();
        frame = ResetStreamFrame{id, in_.u8(), pick_offset(id)};
        break;
      }
      case 7: frame = MaxDataFrame{pick_value()}; break;
      case 8: {
        const StreamId id = pick_stream_id();
        frame = MaxStreamDataFrame{id, pick_value()};
        break;
      }
      case 9: {
        const StreamId id = pick_stream_id();
        frame = StreamClassFrame{id, static_cast<ContentClass>(in_.u8() % 4)};
        break;
      }
      case 10: frame = CloseFrame{in_.u8(), std::string(in_.u8() % 64, 'x')}; break;
      case 11: frame = MaxStreamsFrame{pick_value() / 4096}; break;
      case 12: {
        FlowOpenFrame f;
        f.flow_id = pick_flow_id();
        f.destination.address = {10, 0, 0, in_.u8()};
        f.destination.port = 5060;
        f.content_class = static_cast<ContentClass>(in_.u8() % kContentClassCount);
        frame = f;
        break;
      }
      case 13: {
        const FlowId id = pick_flow_id();
        datagram_data_ = pattern_bytes(id, 0, in_.u16() % 1400, kClientSalt);
        frame = DatagramFrame{id, datagram_data_};
        break;
      }
      case 14: {
        const FlowId id = pick_flow_id();
        frame = FlowCloseFrame{id, in_.u8() < 0x80 ? 0u : in_.u8()};
        break;
      }
      case 15: {  // the categories (wire values 4-7) as a stream's class
        const StreamId id = pick_stream_id();
        frame = StreamClassFrame{id, static_cast<ContentClass>(in_.u8() % kContentClassCount)};
        break;
      }
    }
    if (!frame) return;
    std::vector<std::byte> one;
    WireWriter w(one);
    encode_frame(w, *frame);
    if (w.ok()) payload.insert(payload.end(), one.begin(), one.end());
  }

  StreamId pick_stream_id() {
    const std::uint8_t b = in_.u8();
    if (b < 0x80) return StreamId{b & 0x0fu} * 2;               // client streams 0..30
    if (b < 0xc0) return StreamId{b & 0x0fu} * 2 + 1;           // the hub's own
    if (b < 0xff) return StreamId{32} + StreamId{b & 0x3fu} * 2 * (1 + (b & 3));  // spread
    return in_.u64() & kVarintMax;
  }

  FlowId pick_flow_id() {
    const std::uint8_t b = in_.u8();
    if (b < 0x80) return FlowId{b & 0x0fu} * 2;      // client flows 0..30
    if (b < 0xc0) return FlowId{b & 0x0fu} * 2 + 1;  // the hub's own
    if (b < 0xff) return FlowId{32} + FlowId{b & 0x3fu} * 2 * (1 + (b & 3));  // spread
    return in_.u64() & kVarintMax;
  }

  std::uint64_t pick_offset(StreamId id) {
    const std::uint8_t b = in_.u8();
    const std::uint64_t next = peer_next_offset_[id];
    if (b < 0x80) return next;                                              // continue
    if (b < 0xc0) return next - std::min<std::uint64_t>(next, (b & 0x3f) * 64u);  // overlap
    if (b < 0xff) return next + (b & 0x3f) * 512u;                          // leave a gap
    return in_.u64() & kVarintMax;                                          // anywhere
  }

  std::uint64_t pick_value() {
    const std::uint8_t b = in_.u8();
    if (b == 0xff) return in_.u64() & kVarintMax;
    return std::uint64_t{b} * 8192;
  }

  // Drains events. For event i, action (policy >> 2 * (i % 4)) & 3 picks what
  // the app does with an opened or readable stream after reading it: nothing,
  // write, write and finish, reset.
  void drain_events(std::uint8_t policy) {
    std::size_t i = 0;
    while (auto e = hub_->poll_event()) {
      if (events.size() < 1'000'000) events.push_back(*e);
      const unsigned action = (policy >> (2 * (i++ % 4))) & 3u;
      if (const auto* o = std::get_if<StreamOpened>(&*e)) {
        if (o->id % 2 != 0) return fail("StreamOpened for a hub-parity id");
        if (!announced_.insert(o->id).second) return fail("StreamOpened twice");
        serve(o->id, action);
      } else if (const auto* r = std::get_if<StreamReadable>(&*e)) {
        if (!announced_.contains(r->id) && !local_.contains(r->id)) {
          return fail("StreamReadable for a stream never opened");
        }
        serve(r->id, action);
      } else if (const auto* w = std::get_if<StreamWritable>(&*e)) {
        if (action == 1) write(w->id, 4096);
      } else if (std::holds_alternative<ConnectionClosed>(*e)) {
        if (++connection_closed_events_ > 1) return fail("ConnectionClosed twice");
      } else if (const auto* o = std::get_if<FlowOpened>(&*e)) {
        if (o->id % 2 != 0) return fail("FlowOpened for a hub-parity id");
        if (!flows_open_.insert(o->id).second) return fail("FlowOpened for a flow already open");
        flows_announced_.insert(o->id);
        serve_flow(o->id, action, 0);
      } else if (const auto* c = std::get_if<FlowClosed>(&*e)) {
        flows_open_.erase(c->id);
      } else if (const auto* d = std::get_if<DatagramReceived>(&*e)) {
        if (!flows_announced_.contains(d->flow) && !local_flows_.contains(d->flow)) {
          return fail("DatagramReceived on a flow never opened");
        }
        if (!tainted_flows_.contains(d->flow) &&
            !std::ranges::equal(d->data, pattern_bytes(d->flow, 0, d->data.size(), kClientSalt))) {
          return fail("DatagramReceived with bytes the peer never sent on that flow");
        }
        ++datagrams_read[d->flow];
        serve_flow(d->flow, action, d->data.size());
      }
      if (violation_) return;
    }
  }

  void serve(StreamId id, unsigned action) {
    read_all(id);
    if (violation_) return;
    switch (action) {
      case 1: write(id, 3000); break;
      case 2: write(id, 1000); hub_->stream_finish(id, now_); break;
      case 3: hub_->stream_reset(id, 0x77, now_); break;
      default: break;
    }
  }

  // What the app does with a peer flow: nothing, echo a datagram, echo two,
  // close it.
  void serve_flow(FlowId id, unsigned action, std::size_t size) {
    if (action == 1 || action == 2) {
      for (unsigned i = 0; i < action; ++i) send_datagram(id, size + i);
    } else if (action == 3) {
      hub_->close_flow(id, 0x77, now_);
      flows_open_.erase(id);
    }
  }

  void send_datagram(FlowId id, std::size_t size) {
    const auto data = pattern_bytes(id, 0, size, kHubSalt);
    (void)hub_->send_datagram(id, data, now_);
  }

  void read_all(StreamId id) {
    std::vector<std::byte> buf(4096);
    std::size_t total = 0;
    while (total < kMaxReadPerEventBytes) {
      bool fin = false;
      const std::size_t n = hub_->stream_read(id, buf, &fin, now_);
      if (n > buf.size()) return fail("stream_read returned more than asked");
      std::uint64_t& offset = read_bytes[id];
      if (!tainted_.contains(id)) {
        for (std::size_t i = 0; i < n; ++i) {
          if (buf[i] != pattern_byte(id, offset + i, kClientSalt)) {
            return fail("stream read returned bytes the peer never sent there");
          }
        }
      }
      offset += n;
      total += n;
      if (fin) fin_read.insert(id);
      if (n == 0) break;
    }
  }

  void write(StreamId id, std::size_t n) {
    std::uint64_t& offset = written_[id];
    const auto data = pattern_bytes(id, offset, n, kHubSalt);
    const std::size_t accepted = hub_->stream_write(id, data, now_);
    if (accepted > n) return fail("stream_write accepted more than given");
    offset += accepted;
  }

  void app_action(std::uint8_t action, std::uint8_t arg) {
    // Target: one of the streams the app knows (opened by either side).
    std::vector<StreamId> known(announced_.begin(), announced_.end());
    known.insert(known.end(), local_.begin(), local_.end());
    const std::optional<StreamId> target =
        known.empty() ? std::nullopt : std::optional<StreamId>(known[arg % known.size()]);
    switch (action % 6) {
      case 0:
        if (arg >= 0xf0) {  // a flow of the hub's own, and a first datagram on it
          Destination e;
          e.address = {192, 168, 1, arg};
          e.port = 3478;
          if (auto id = hub_->open_flow(e, static_cast<ContentClass>(arg % kContentClassCount), now_)) {
            if (*id % 2 != 1) return fail("hub opened a client-parity flow id");
            local_flows_.insert(*id);
            send_datagram(*id, 40u + arg);
          }
        } else if (local_.size() < 64) {
          Destination e;
          e.address = {192, 168, 0, arg};
          if (auto id = hub_->open_stream(e, static_cast<ContentClass>(arg % 4), now_)) {
            if (*id % 2 != 1) return fail("hub opened a client-parity id");
            local_.insert(*id);
          }
        }
        break;
      case 1: if (target) write(*target, 64u * arg + 1); break;
      case 2: if (target) hub_->stream_finish(*target, now_); break;
      case 3: if (target) hub_->stream_reset(*target, arg, now_); break;
      case 4:
        if (target) hub_->set_stream_class(*target, static_cast<ContentClass>(arg % 4), now_);
        break;
      case 5:
        if (arg == 0xff) hub_->close(0x42, "app closes", now_);
        break;
    }
  }

  void open_initial_streams() {
    std::vector<std::byte> payload;
    WireWriter w(payload);
    for (StreamId id : {0, 2, 4}) {
      StreamOpenFrame open;
      open.stream_id = id;
      open.destination.address = {10, 0, 0, static_cast<std::uint8_t>(id)};
      open.destination.port = 80;
      encode_frame(w, open);
    }
    const auto data = pattern_bytes(0, 0, 100, kClientSalt);
    encode_frame(w, StreamFrame{0, 0, false, data});
    deliver_sealed(next_pn_++, payload);
    drain_events(0);
  }

  // ------------------------------------------------------------ invariants
  void check() {
    if (violation_) return;
    const ConnectionStats s = hub_->stats();
    const ConnectionStats& p = last_stats_;
    if (s.datagrams_received < p.datagrams_received || s.datagrams_dropped < p.datagrams_dropped ||
        s.datagrams_forged < p.datagrams_forged || s.datagrams_duplicate < p.datagrams_duplicate ||
        s.datagrams_malformed < p.datagrams_malformed || s.datagrams_sent < p.datagrams_sent ||
        s.stream_bytes_retransmitted < p.stream_bytes_retransmitted ||
        s.ensembles_started < p.ensembles_started) {
      return fail("a stats counter went down");
    }
    if (s.datagrams_dropped != s.datagrams_forged + s.datagrams_duplicate + s.datagrams_malformed) {
      return fail("drop reasons do not add up to datagrams_dropped");
    }
    if (s.datagrams_sent != datagrams_out) return fail("datagrams_sent != datagrams polled");
    last_stats_ = s;

    if (hub_->is_closed()) {
      if (hub_->next_timeout()) return fail("closed connection still wants a timer");
    } else if (connection_closed_events_ > 0) {
      return fail("ConnectionClosed event but not is_closed()");
    }

    // Peer streams alive: every client-parity id the script could name.
    std::size_t alive = 0;
    for (StreamId id : peer_ids_) alive += hub_->stream_exists(id) ? 1 : 0;
    max_peer_streams_alive = std::max(max_peer_streams_alive, alive);
    if (alive > config_.max_incoming_streams) return fail("more peer streams than max_incoming_streams");
    if (flows_open_.size() > config_.max_incoming_flows) return fail("more peer flows than max_incoming_flows");
    const FlowStats& f = s.flows;
    const FlowStats& pf = p_flows_;
    if (f.flows_opened < pf.flows_opened || f.flows_refused < pf.flows_refused ||
        f.datagrams_sent < pf.datagrams_sent || f.datagrams_received < pf.datagrams_received ||
        f.dropped_deadline < pf.dropped_deadline || f.dropped_unknown_flow < pf.dropped_unknown_flow) {
      return fail("a flow counter went down");
    }
    p_flows_ = f;
  }

  void fail(const char* what) {
    if (!violation_) violation_ = std::string(what);
  }

  ScriptReader in_;
  std::uint8_t cfg_ = 0;
  ConnectionConfig config_;
  Instant start_ = instant_at(ms(1000));
  Instant now_ = start_;
  std::unique_ptr<congestion::TemporalCache> cache_;
  std::unique_ptr<Connection> hub_;
  std::unique_ptr<TestProtection> peer_protection_;
  std::unique_ptr<TestProtection> verify_protection_;
  ConnectionStats last_stats_;
  std::optional<std::string> violation_;

  PacketNumber next_pn_ = 0;
  std::vector<PacketNumber> used_pns_;
  std::vector<PacketNumber> recent_sent_pns_;
  std::optional<PacketNumber> last_sent_pn_;
  bool close_sent_ = false;
  int connection_closed_events_ = 0;
  std::set<StreamId> announced_;  // peer streams the app was told about
  std::set<StreamId> local_;      // streams the hub app opened
  std::set<StreamId> tainted_;
  std::set<StreamId> peer_ids_;  // client-parity ids any authentic frame named
  std::map<StreamId, std::uint64_t> peer_next_offset_;  // highest end the peer sent
  std::map<StreamId, std::uint64_t> written_;
  std::vector<std::byte> stream_data_;  // the generated STREAM frame's bytes
  std::vector<std::byte> datagram_data_;  // the generated DATAGRAM frame's bytes
  std::set<FlowId> flows_open_;       // peer flows open as the app's events say
  std::set<FlowId> flows_announced_;  // every peer flow the app was told about
  std::set<FlowId> local_flows_;      // flows the hub app opened
  std::set<FlowId> tainted_flows_;    // fed bytes other than the pattern
  FlowStats p_flows_;
};

// Writes scripts in the format above, for hand-made hostile scenarios.
struct Pn {
  std::uint8_t selector = 0;
  std::uint64_t number = 0;
  static Pn next() { return {0x00, 0}; }
  static Pn again(std::uint8_t back = 0) { return {static_cast<std::uint8_t>(0xc0 | (back & 0x1f)), 0}; }
  static Pn jump(std::uint8_t log2) { return {static_cast<std::uint8_t>(0xe0 | (log2 & 0x1f)), 0}; }
  static Pn exactly(PacketNumber n) { return {0xff, n}; }
};

class ScriptBuilder {
 public:
  explicit ScriptBuilder(std::uint8_t config = 0) { put(config); }

  // Frames sealed into one packet (an encoding failure leaves the frame out,
  // as a sender that checks w.ok() would). At most kMaxChunkBytes of payload.
  ScriptBuilder& frames(const std::vector<Frame>& frames, Pn pn = Pn::next()) {
    std::vector<std::byte> payload;
    WireWriter w(payload);
    for (const Frame& f : frames) encode_frame(w, f);
    return payload_op(payload, pn);
  }
  ScriptBuilder& payload_op(std::span<const std::byte> payload, Pn pn = Pn::next()) {
    put(static_cast<std::uint8_t>(Op::sealed));
    put_pn(pn);
    put_chunk(payload);
    return *this;
  }
  ScriptBuilder& raw(std::span<const std::byte> datagram) {
    put(static_cast<std::uint8_t>(Op::raw));
    put_chunk(datagram);
    return *this;
  }
  ScriptBuilder& advance(Duration d) {
    while (d > Duration::zero()) {
      const std::int64_t ms_total = d.count() / 1000;
      if (d.count() % 1000 == 0 && ms_total <= 0xffff) {
        put_advance(1, static_cast<std::uint16_t>(ms_total));
        d = Duration::zero();
      } else if (d.count() < 0x10000) {
        put_advance(0, static_cast<std::uint16_t>(d.count()));
        d = Duration::zero();
      } else {
        const std::int64_t steps = std::min<std::int64_t>(d.count() / 100'000, 0xffff);
        put_advance(2, static_cast<std::uint16_t>(steps));
        d -= Duration(steps * 100'000);
      }
    }
    return *this;
  }
  ScriptBuilder& transmit() {
    put(static_cast<std::uint8_t>(Op::transmit));
    return *this;
  }
  ScriptBuilder& events(std::uint8_t policy = 0) {
    put(static_cast<std::uint8_t>(Op::events));
    put(policy);
    return *this;
  }
  // ACK the hub's recent packets (mask bits leave groups of them out).
  ScriptBuilder& ack_sent(std::uint8_t mask = 0, Pn pn = Pn::next()) {
    put(static_cast<std::uint8_t>(Op::ack_sent));
    put_pn(pn);
    put(mask);
    put(0);
    return *this;
  }
  ScriptBuilder& app(std::uint8_t action, std::uint8_t arg) {
    put(static_cast<std::uint8_t>(Op::app));
    put(action);
    put(arg);
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  void put(std::uint8_t b) { bytes_.push_back(static_cast<std::byte>(b)); }
  void put_pn(Pn pn) {
    put(pn.selector);
    if (pn.selector == 0xff) {
      for (int i = 7; i >= 0; --i) put(static_cast<std::uint8_t>(pn.number >> (8 * i)));
    }
  }
  void put_chunk(std::span<const std::byte> data) {
    const std::size_t n = std::min(data.size(), kMaxChunkBytes);
    put(static_cast<std::uint8_t>(n >> 8));
    put(static_cast<std::uint8_t>(n));
    bytes_.insert(bytes_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n));
  }
  void put_advance(std::uint8_t unit, std::uint16_t amount) {
    put(static_cast<std::uint8_t>(Op::advance));
    put(unit);
    put(static_cast<std::uint8_t>(amount >> 8));
    put(static_cast<std::uint8_t>(amount));
  }

  std::vector<std::byte> bytes_;
};

}  // namespace egw::tunnel::fuzzing
