// Connection-level flow control (RFC 9000 section 4.1, MAX_DATA), both ways,
// and the protocol's initial credits.
//
// The sender's initial credits are the peer's transport parameters
// (ConnectionConfig::peer: initial_max_data, initial_max_stream_data). A
// connection without a handshake assumes the initial credits below (the
// default of ConnectionConfig::peer) until the first MAX_DATA /
// MAX_STREAM_DATA arrives; each side sends MAX_DATA in its first packet and
// the stream opener sends MAX_STREAM_DATA next to STREAM_OPEN, so the larger
// configured windows apply within one RTT. A receiver therefore accepts at
// least the initial credit even when configured with a smaller window (and
// local_transport_parameters() advertises that).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "common/units.h"

namespace egw::tunnel {

inline constexpr std::uint64_t kInitialStreamCreditBytes = 16 * 1024;
inline constexpr std::uint64_t kInitialConnectionCreditBytes = 256 * 1024;

// Receive-window auto-tuning (quiche's flowcontrol.rs, Linux's tcp_rmem
// autotuning in spirit): a fixed window caps a stream at window / RTT
// (256 KiB: 21 Mbit/s at 100 ms). Each time a credit update is due (half
// the window was read since the last one), if the last one was less than
// two RTTs ago, the reader kept up and the window, not the path or the
// reader, was the limit: the window doubles, up to max_window. A slow
// reader takes longer than two RTTs per half window and the window stays.
// Growing to about 4x the path's BDP is where it stops (half a window per
// 2 RTTs), so memory follows the path, bounded by max_window.
class WindowTuner {
 public:
  WindowTuner(ByteCount window_bytes, ByteCount max_window_bytes)
      : window_(clamp32(window_bytes)), max_window_(clamp32(std::max(window_bytes, max_window_bytes))) {}
  // An update is due now; rtt is the connection's smoothed RTT (0: none yet,
  // no growth).
  void on_update(Instant now, Duration rtt) {
    if (last_update_ != Instant{} && now - last_update_ < 2 * rtt) {
      window_ = std::min<std::uint64_t>(max_window_, std::uint64_t{2} * window_);
    }
    last_update_ = now;
  }
  ByteCount window() const { return window_; }
  ByteCount max_window() const { return max_window_; }

 private:
  // 32-bit sizes (windows stay below 4 GiB): one per stream, and the
  // per-stream state is kept within a kilobyte (tests/alloc).
  static std::uint32_t clamp32(ByteCount bytes) {
    return static_cast<std::uint32_t>(std::min<ByteCount>(bytes, 0xffff'ffffu));
  }
  std::uint32_t window_;
  std::uint32_t max_window_;
  Instant last_update_{};  // Instant{}: no update yet
};

// What the peer lets us send on the whole connection: the sum over streams
// of the highest offset sent never exceeds the peer's MAX_DATA.
class SendCredit {
 public:
  explicit SendCredit(std::uint64_t initial) : maximum_(initial) {}
  void on_max_data(std::uint64_t maximum) { maximum_ = std::max(maximum_, maximum); }
  std::uint64_t available() const { return maximum_ - sent_; }
  void on_new_bytes_sent(std::uint64_t bytes) { sent_ += bytes; }
  std::uint64_t maximum() const { return maximum_; }

 private:
  std::uint64_t maximum_;
  std::uint64_t sent_ = 0;
};

// What we let the peer send: received is the sum over streams of the
// highest offset received, consumed what the application read (or what a
// reset stream will never deliver).
class RecvCredit {
 public:
  // The window starts at window_bytes and auto-tunes up to max_window_bytes
  // (WindowTuner; no larger than window_bytes: fixed).
  RecvCredit(ByteCount window_bytes, std::uint64_t initial, ByteCount max_window_bytes = 0)
      : tuner_(window_bytes, max_window_bytes), maximum_(std::max(window_bytes, initial)) {}

  // False when the peer exceeded our credit (a flow-control violation).
  bool on_received(std::uint64_t new_bytes) {
    received_ += new_bytes;
    return received_ <= maximum_;
  }
  void on_consumed(std::uint64_t bytes) { consumed_ += bytes; }
  // A new MAX_DATA once half the window was consumed since the last one, or
  // sooner once the new credit exceeds what the peer may still send. Bytes
  // nobody reads (a client that stopped reading) hold part of the window:
  // with half of it held, the other streams could never receive the half
  // window of reads the first rule waits for, and the connection would
  // deadlock. With everything read at once the two rules agree. `now` and
  // `rtt` drive the auto-tuning (rtt 0: the window stays as it is).
  std::optional<std::uint64_t> take_update(Instant now = Instant{}, Duration rtt = Duration{0}) {
    if (!update_due()) return std::nullopt;
    tuner_.on_update(now, rtt);
    maximum_ = consumed_ + tuner_.window();
    return maximum_;
  }
  // take_update would give a new MAX_DATA (the caller then finds the RTT).
  bool update_due() const {
    const ByteCount window = tuner_.window();
    if (consumed_ + window <= maximum_) return false;
    const std::uint64_t grant = consumed_ + window - maximum_;
    const std::uint64_t remaining = maximum_ > received_ ? maximum_ - received_ : 0;
    return grant >= window / 2 || grant >= remaining;
  }
  ByteCount window() const { return tuner_.window(); }
  std::uint64_t maximum() const { return maximum_; }
  // Received (up to the highest offsets, holes included) and not yet read:
  // what the peer's data may occupy in our receive buffers now.
  std::uint64_t unconsumed() const { return received_ > consumed_ ? received_ - consumed_ : 0; }

 private:
  WindowTuner tuner_;
  std::uint64_t maximum_;
  std::uint64_t received_ = 0;
  std::uint64_t consumed_ = 0;
};

}  // namespace egw::tunnel
