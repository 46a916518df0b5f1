#include "congestion/prr.h"

#include <algorithm>

namespace egw::congestion {

Prr::Prr(ByteCount ssthresh_bytes, ByteCount recover_fs_bytes)
    : ssthresh_bytes_(ssthresh_bytes), recover_fs_bytes_(std::max<ByteCount>(recover_fs_bytes, 1)) {}

void Prr::on_ack(ByteCount delivered_bytes, ByteCount pipe_bytes, ByteCount mss_bytes) {
  prr_delivered_bytes_ += delivered_bytes;
  if (pipe_bytes > ssthresh_bytes_) {
    // Proportional part. prr_delivered * ssthresh stays far below 2^64 for
    // any window a real path holds (1 GB * 1 GB = 1e18).
    const ByteCount target =
        (prr_delivered_bytes_ * ssthresh_bytes_ + recover_fs_bytes_ - 1) / recover_fs_bytes_;
    sndcnt_bytes_ = target > prr_out_bytes_ ? target - prr_out_bytes_ : 0;
    return;
  }
  // PRR-SSRB: catch up towards ssthresh, at most one MSS beyond delivery.
  const ByteCount banked =
      prr_delivered_bytes_ > prr_out_bytes_ ? prr_delivered_bytes_ - prr_out_bytes_ : 0;
  const ByteCount limit = std::max(banked, delivered_bytes) + mss_bytes;
  sndcnt_bytes_ = std::min(ssthresh_bytes_ - pipe_bytes, limit);
}

void Prr::on_sent(ByteCount bytes) {
  prr_out_bytes_ += bytes;
  sndcnt_bytes_ -= std::min(sndcnt_bytes_, bytes);
}

}  // namespace egw::congestion
