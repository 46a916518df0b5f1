// Proportional Rate Reduction (RFC 6937 section 3, PRR-SSRB): how much a
// domain may send during loss recovery.
//
// Without PRR the window drops to ssthresh at once and sending stops until
// the flight drains below it, so the first retransmission waits about half a
// round trip. PRR instead spreads the reduction over the recovery round: for
// every byte delivered it lets ssthresh / RecoverFS bytes out, so the flight
// shrinks smoothly from RecoverFS to ssthresh and the first retransmission
// goes on the first ACK. When the flight has fallen below ssthresh (a burst of
// losses) the slow-start reduction bound lets it grow back towards ssthresh,
// at most one MSS beyond what is delivered per ACK.
//
//   at the start of recovery:  prr_delivered = prr_out = 0,
//                              RecoverFS = FlightSize, ssthresh from the law
//   on every ACK in recovery:  prr_delivered += DeliveredData
//     pipe > ssthresh:   sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
//     else (SSRB):       sndcnt = MIN(ssthresh - pipe,
//                                     MAX(prr_delivered - prr_out, DeliveredData) + MSS)
//   on every send:             prr_out += bytes
//
// Byte counting: a packet may leave while sndcnt > 0, so prr_out may exceed
// the RFC's sndcnt by less than one packet. With full-size packets this is
// exactly the RFC's segment arithmetic: CEIL(k * ssthresh / RecoverFS) in
// segments exceeds prr_out segments iff k * ssthresh / RecoverFS > prr_out.
//
// Pure arithmetic: the Ensemble decides when recovery starts and ends
// (congestion/ensemble.cc) and what "pipe" is (its bytes in flight, lost
// packets already removed, as RFC 6675's pipe).
#pragma once

#include "common/units.h"

namespace egw::congestion {

class Prr {
 public:
  // RFC 6937 3, "at the beginning of recovery". recover_fs_bytes: the flight
  // before the ACK (or timeout) that started recovery.
  Prr(ByteCount ssthresh_bytes, ByteCount recover_fs_bytes);

  // Every ACK during recovery (the one that started it included).
  // pipe_bytes: bytes in flight after this ACK and the losses it declared.
  void on_ack(ByteCount delivered_bytes, ByteCount pipe_bytes, ByteCount mss_bytes);
  // Every packet sent during recovery (new data and retransmissions alike).
  void on_sent(ByteCount bytes);

  // May one more packet leave now (sndcnt not used up)?
  bool may_send() const { return sndcnt_bytes_ > 0; }
  // What is left of this ACK's sndcnt.
  ByteCount sndcnt_bytes() const { return sndcnt_bytes_; }
  ByteCount prr_delivered_bytes() const { return prr_delivered_bytes_; }
  ByteCount prr_out_bytes() const { return prr_out_bytes_; }
  ByteCount ssthresh_bytes() const { return ssthresh_bytes_; }
  ByteCount recover_fs_bytes() const { return recover_fs_bytes_; }

 private:
  ByteCount ssthresh_bytes_;
  ByteCount recover_fs_bytes_;
  ByteCount prr_delivered_bytes_ = 0;
  ByteCount prr_out_bytes_ = 0;
  ByteCount sndcnt_bytes_ = 0;
};

}  // namespace egw::congestion
