// The text form of a LinkConfig, shared by wanem's command line and its
// stdin commands: comma-separated key=value, applied in order on top of a
// config (so `set a2b loss=0.3` changes only the loss).
//
//   rate=800k     bit/s of IP bytes; suffix k, M, G = 1e3, 1e6, 1e9
//                 (case-insensitive); 0 = unlimited
//   delay=50      one-way delay, ms (fractional: 0.5); an "ms" suffix is allowed
//   jitter=5      ms, each packet gets U[0, jitter] more delay
//   reorder=0.1   probability a packet may overtake (1/true/on = always, 0/false/off = never)
//   queue=10p     limit on *waiting* packets; 15000b: on waiting IP bytes; 0 = none
//   loss=0.01     Bernoulli loss before the queue, also as 1%; 1 = link down
//   le_drop=1     drop DSCP LE packets first when the queue is full (default on)
//   seed=7        the RNG seed (loss, jitter, reorder)
#pragma once

#include <string>
#include <string_view>

#include "bench/wanem/link.h"

namespace egw::wanem {

// Applies `spec` to `config`. Returns "" on success, else what is wrong
// (then `config` may be partly changed: apply to a copy).
std::string apply_options(std::string_view spec, LinkConfig& config);

// The options back as text, e.g. "rate=800000,delay=50ms,...".
std::string describe(const LinkConfig& config);

}  // namespace egw::wanem
