// Integrity under loss and reordering (issue 2 section 5 item 8): every
// stream's bytes arrive complete and in order.
//
//   left(0) client ==== forward: 10 Mbit/s, 50 ms, queue 100, loss p, jitter ====> right(0) server
//                  <=== reverse: the same                                    ====
//
// One tunnel connection carries 8 concurrent bulk streams, 4 in each
// direction, of 200 KB to 2 MB. Random loss p (1 % or 5 %) hits both
// directions independently; up to 5 ms of random extra delay per packet
// (> the 1.2 ms serialisation time of a 1500-byte packet at 10 Mbit/s) lets
// later packets overtake earlier ones. Every receiver checks each byte at
// its offset against the stream's deterministic content (stream_content.h:
// a function of stream id and offset), so a lost, duplicated or misplaced
// byte is a mismatch; a stream is intact when it delivered exactly its size,
// then FIN, with no mismatch and no reset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/units.h"
#include "congestion/ensemble.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::sim {}
namespace egw::scenarios {

// Experiments are written in the simulator's vocabulary.
using namespace egw::sim;

struct IntegrityParams {
  std::uint64_t bottleneck_bits_per_second = 10'000'000;
  Duration one_way_delay = ms(50);
  ByteCount packet_bytes = 1472;  // 1500 B on the wire with IPv4 + UDP
  std::size_t queue_limit_packets = 100;
  double loss_probability = 0.01;
  Duration max_jitter = ms(5);
  congestion::CouplingMode coupling = congestion::CouplingMode::single;
  // Sizes of the streams; even indexes download (server -> client), odd
  // ones upload, started `start_spacing` apart. 4.25 MB down, 4.15 MB up.
  std::vector<ByteCount> stream_bytes = {200'000, 700'000, 2'000'000, 1'300'000,
                                         950'000, 450'000, 1'100'000, 1'700'000};
  Duration start_spacing = ms(100);
  // > 0: stream i instead starts at a random instant in [0, start_spread),
  // drawn from the seed (the multi-seed runs use 1 s).
  Duration start_spread = ms(0);
  Duration deadline = ms(600'000);  // simulated; a stall fails the run
  std::uint64_t seed = 1;
};

struct IntegrityStream {
  ByteCount size_bytes = 0;
  bool download = true;
  ByteCount delivered_bytes = 0;
  bool complete = false;  // every byte and the FIN arrived
  bool closed = false;    // both ends saw StreamClosed
  bool reset = false;
  std::uint64_t mismatches = 0;
  std::optional<Duration> completion_time;
};

struct IntegrityResult {
  IntegrityParams params;
  std::string describe;
  bool all_complete = false;
  std::vector<IntegrityStream> streams;
  Instant finished_at{};
  std::uint64_t random_drops_forward = 0;  // link drops by loss_probability
  std::uint64_t random_drops_reverse = 0;
  std::uint64_t queue_drops = 0;           // both directions
  std::uint64_t datagrams_rejected = 0;    // forged or malformed, both ends (must be 0)
  std::uint64_t retransmitted_bytes = 0;   // both ends
  bool connection_closed = false;          // either end saw ConnectionClosed (must not)
  std::uint64_t events = 0;

  bool intact() const;  // every stream complete, exact size, no mismatch or reset
};

IntegrityResult run_integrity(const IntegrityParams& params);
std::string report_integrity(const std::vector<IntegrityResult>& results);

// The same case over `seeds` seeds (params.seed, +1, ...), each with random
// start times in [0, start_spread) (1 s when params.start_spread is 0).
struct IntegritySeeds {
  IntegrityParams params;
  std::vector<IntegrityResult> runs;
  std::size_t intact_runs = 0;
  SeedStats finished_s;         // when the last stream completed
  SeedStats retransmitted_kb;   // both ends
  SeedStats random_drops;       // both directions
};
IntegritySeeds run_integrity_seeds(const IntegrityParams& params, std::size_t seeds);
std::string report_integrity_seeds(const std::vector<IntegritySeeds>& cases);

}  // namespace egw::scenarios
