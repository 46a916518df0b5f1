#include <iostream>
#include <gtest/gtest.h>
#include "tests/sim/scenario.h"
namespace egw::sim {
TEST(Probe, QueueSizes) {
  for (std::size_t q : {20u, 50u, 100u, 200u}) {
    PathConfig path; path.queue_limit_packets = q; path.max_pairs = 1;
    Scenario s(path);
    auto p = s.add_pair();
    BulkConfig c; c.bytes = 1 << 20;
    auto& b = s.add_bulk(p, c, instant_at(ms(0)));
    bool done = s.run_until_done(instant_at(ms(30'000)));
    auto st = s.server(p).connection().stats();
    std::cout << "q " << q << " done " << done << " bytes " << b.bytes_delivered() << " lost " << st.ensemble.packets_lost
              << " rounds " << st.ensemble.loss_rounds << " rto " << st.ensemble.rto_count << " retx " << st.stream_bytes_retransmitted << " inflight " << st.ensemble.bytes_in_flight << "\n";
  }
}
}
