#include "tests/scenarios/bulk_competition.h"

#include <memory>
#include <stdexcept>

#include "tests/scenarios/seed_stats.h"
#include "tests/sim/scenario.h"
#include "tests/sim/shaped_stream.h"

namespace egw::scenarios {

namespace {

struct StreamSlot {
  std::size_t group = 0;
  BulkTransfer* bulk = nullptr;
};

// One simulation with `seed`; groups' numbers are this run's alone.
CompetitionResult run_once(const CompetitionPath& cp, const std::vector<CompetitionGroup>& groups,
                           std::uint64_t seed) {
  std::size_t connections = 0;
  for (const auto& g : groups) connections += g.one_connection ? 1 : g.streams;

  PathConfig path;
  path.bottleneck_bits_per_second = cp.bottleneck_bits_per_second;
  path.one_way_delay = cp.one_way_delay;
  path.queue_limit_packets = cp.queue_limit_packets;
  path.packet_bytes = cp.packet_bytes;
  path.max_jitter = cp.max_jitter;
  path.max_pairs = connections;
  path.seed = seed;
  Scenario s(path);

  // Twice what the whole link could carry by the horizon: no stream ends early.
  BulkConfig bulk;
  bulk.bytes = cp.bottleneck_bits_per_second / 8 * 2 *
               static_cast<ByteCount>(cp.horizon.count() / 1'000'000 + 1);
  bulk.direction = BulkConfig::Direction::server_to_client;

  std::vector<StreamSlot> slots;
  std::vector<std::vector<std::size_t>> pairs_of_group(groups.size());
  Instant start = instant_at(ms(0));
  std::mt19937_64 start_rng = start_time_rng(seed);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    PairConfig pc;
    pc.coupling = groups[g].coupling;
    pc.law = groups[g].law.value_or(cp.law);
    pc.initial_window_packets = cp.initial_window_packets;
    pc.policy = congestion::SchedulingPolicy::fair;  // every stream is bulk anyway
    std::size_t pair = 0;
    for (std::size_t i = 0; i < groups[g].streams; ++i) {
      if (i == 0 || !groups[g].one_connection) {
        pair = s.add_pair(pc);
        pairs_of_group[g].push_back(pair);
      }
      const Instant at = cp.start_spread.count() > 0
                             ? instant_at(random_offset(start_rng, ms(0), cp.start_spread))
                             : start;
      slots.push_back({g, &s.add_bulk(pair, bulk, at)});
      start += cp.start_spacing;
    }
  }

  std::vector<std::unique_ptr<ShapedStream>> idle;  // destroyed before `s`
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t i = 0; i < groups[g].idle_streams; ++i) {
      const std::size_t pair = pairs_of_group[g].front();
      idle.push_back(std::make_unique<ShapedStream>(
          s.loop(), ShapedStreamConfig{.port = static_cast<std::uint16_t>(7000 + i)}, s.client(pair),
          s.server(pair)));
      idle.back()->start_at(instant_at(ms(0)));
    }
  }

  s.run_until(instant_at(cp.horizon));

  CompetitionResult r;
  r.describe = s.describe();
  r.runs = 1;
  const double window_s = to_seconds(cp.horizon - cp.warmup);
  const Instant from = instant_at(cp.warmup);
  const Instant to = instant_at(cp.horizon);
  r.groups.resize(groups.size());
  double all_bits_per_second = 0.0;
  for (std::size_t g = 0; g < groups.size(); ++g) r.groups[g].label = groups[g].label;
  for (const StreamSlot& slot : slots) {
    GroupResult& gr = r.groups[slot.group];
    const ByteCount bytes = slot.bulk->bytes_delivered_by(to) - slot.bulk->bytes_delivered_by(from);
    const double bps = static_cast<double>(bytes) * 8.0 / window_s;
    gr.stream_bits_per_second.push_back(bps);
    gr.total_bits_per_second += bps;
    all_bits_per_second += bps;
    gr.mismatches += slot.bulk->mismatches();
    gr.any_stream_reset = gr.any_stream_reset || slot.bulk->reset();
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    r.groups[g].run_total_bits_per_second.push_back(r.groups[g].total_bits_per_second);
    r.groups[g].run_stream_bits_per_second.push_back(r.groups[g].stream_bits_per_second);
    for (std::size_t pair : pairs_of_group[g]) {
      const auto st = s.server(pair).connection().stats().ensemble;
      r.groups[g].loss_rounds += st.loss_rounds;
      r.groups[g].rto_count += st.rto_count;
    }
  }
  r.bottleneck_drops = s.network().reverse().stats().dropped_total();
  r.bottleneck_utilization = all_bits_per_second / static_cast<double>(cp.bottleneck_bits_per_second);
  r.events = s.loop().events_run();
  return r;
}

// Adds run `b` into the running sums of `a` (same groups and streams).
void accumulate(CompetitionResult& a, const CompetitionResult& b) {
  a.runs += b.runs;
  a.bottleneck_drops += b.bottleneck_drops;
  a.bottleneck_utilization += b.bottleneck_utilization;
  a.events += b.events;
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    GroupResult& x = a.groups[g];
    const GroupResult& y = b.groups[g];
    for (std::size_t i = 0; i < x.stream_bits_per_second.size(); ++i) {
      x.stream_bits_per_second[i] += y.stream_bits_per_second[i];
    }
    x.total_bits_per_second += y.total_bits_per_second;
    x.run_total_bits_per_second.insert(x.run_total_bits_per_second.end(),
                                       y.run_total_bits_per_second.begin(),
                                       y.run_total_bits_per_second.end());
    x.run_stream_bits_per_second.insert(x.run_stream_bits_per_second.end(),
                                        y.run_stream_bits_per_second.begin(),
                                        y.run_stream_bits_per_second.end());
    x.loss_rounds += y.loss_rounds;
    x.rto_count += y.rto_count;
    x.mismatches += y.mismatches;
    x.any_stream_reset = x.any_stream_reset || y.any_stream_reset;
  }
}

}  // namespace

std::vector<double> run_ratios(const CompetitionResult& r, std::size_t a, std::size_t b) {
  std::vector<double> out;
  const auto& x = r.groups.at(a).run_total_bits_per_second;
  const auto& y = r.groups.at(b).run_total_bits_per_second;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) out.push_back(y[i] > 0.0 ? x[i] / y[i] : 0.0);
  return out;
}

double jain_index(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  double sum_squares = 0.0;
  for (double v : values) {
    sum += v;
    sum_squares += v * v;
  }
  if (sum_squares == 0.0) return 0.0;
  return sum * sum / (static_cast<double>(values.size()) * sum_squares);
}

CompetitionResult run_competition(const CompetitionPath& cp,
                                  const std::vector<CompetitionGroup>& groups) {
  if (cp.horizon <= cp.warmup) throw std::invalid_argument("run_competition: horizon <= warmup");
  const std::size_t runs = cp.runs == 0 ? 1 : cp.runs;
  CompetitionResult r = run_once(cp, groups, cp.seed);
  for (std::size_t i = 1; i < runs; ++i) accumulate(r, run_once(cp, groups, cp.seed + i));
  // Sums over runs -> means (drops, events and loss counts stay totals).
  const double n = static_cast<double>(r.runs);
  r.bottleneck_utilization /= n;
  for (GroupResult& g : r.groups) {
    g.total_bits_per_second /= n;
    for (double& bps : g.stream_bits_per_second) bps /= n;
  }
  return r;
}

}  // namespace egw::scenarios
