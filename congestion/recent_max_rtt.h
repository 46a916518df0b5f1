// The largest RTT sample of the last one to two round trips: a windowed max
// in two buckets of one round each (the idea of Linux's lib/minmax.c, in
// its simplest form). Veno's random-loss test reads it: a sender held by
// flow control or the application sends in bursts, a burst can fill the
// queue and lose its tail, and the acks that reveal the loss may belong to
// the next burst, which found the queue drained. Some sample of the round
// before still shows the queue; the latest one and the smoothed RTT may not.
#pragma once

#include <algorithm>

#include "common/units.h"

namespace egw::congestion {

class RecentMaxRtt {
 public:
  // `round`: the length of a bucket (the smoothed RTT).
  void on_sample(Instant now, Duration sample, Duration round) {
    if (!started_ || now - current_start_ >= round) {
      // The bucket ending now becomes the previous one, unless it is more
      // than a round old (a silence): then nothing of it is recent.
      previous_ = started_ && now - current_start_ < 2 * round ? current_ : Duration{0};
      current_ = Duration{0};
      current_start_ = now;
      started_ = true;
    }
    current_ = std::max(current_, sample);
  }
  Duration get() const { return std::max(current_, previous_); }

 private:
  bool started_ = false;
  Instant current_start_{};
  Duration current_{0};
  Duration previous_{0};
};

}  // namespace egw::congestion
