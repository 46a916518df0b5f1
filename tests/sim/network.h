// A dumbbell: N hosts on the left, N on the right, one bottleneck link in
// each direction between them. Access links are ideal (no delay, no queue),
// so every effect comes from the two bottleneck links.
//
//   left(0) --\                                   /-- right(0)
//   left(1) ---+-- forward Link (left -> right) --+--- right(1)
//   ...     ---+<-- reverse Link (right -> left) -+--- ...
//   left(N-1)-/                                   \-- right(N-1)
//
// Addresses: left host i is kLeftBase + i, right host i is kRightBase + i;
// a packet's side is decided by its source address, its receiver by its
// destination address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "tests/sim/event_loop.h"
#include "tests/sim/link.h"
#include "tests/sim/packet.h"

namespace egw::sim {

struct DumbbellConfig {
  std::size_t hosts_per_side = 1;
  LinkConfig forward;  // left -> right
  LinkConfig reverse;  // right -> left
  std::uint64_t seed = 1;  // the links' random loss and jitter
};

class Dumbbell {
 public:
  static constexpr Address kLeftBase = 0x0A00'0001;   // 10.0.0.1
  static constexpr Address kRightBase = 0x0A01'0001;  // 10.1.0.1
  using Receiver = std::function<void(Packet)>;

  Dumbbell(EventLoop& loop, const DumbbellConfig& config);
  Dumbbell(const Dumbbell&) = delete;
  Dumbbell& operator=(const Dumbbell&) = delete;

  Address left(std::size_t i) const;
  Address right(std::size_t i) const;
  std::size_t hosts_per_side() const { return config_.hosts_per_side; }

  // The host at `address` receives packets through `receiver` (replaces any earlier one).
  void attach(Address address, Receiver receiver);
  // Sends from packet.src to packet.dst across the bottleneck; throws when
  // either address is unknown or both are on the same side.
  void send(Packet packet);

  Link& forward() { return forward_; }
  Link& reverse() { return reverse_; }
  // Packets that arrived for an address with no receiver.
  std::uint64_t undeliverable() const { return undeliverable_; }

 private:
  enum class Side { left, right };
  struct Host { Side side; std::size_t index; };
  std::optional<Host> locate(Address a) const;
  void deliver(Packet packet);

  DumbbellConfig config_;
  std::mt19937_64 forward_rng_;
  std::mt19937_64 reverse_rng_;
  Link forward_;
  Link reverse_;
  std::vector<Receiver> left_receivers_;
  std::vector<Receiver> right_receivers_;
  std::uint64_t undeliverable_ = 0;
};

}  // namespace egw::sim
