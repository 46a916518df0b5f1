#include "tests/sim/network.h"

#include <stdexcept>
#include <utility>

namespace egw::sim {

namespace {
// Independent streams for the two directions from one scenario seed, so
// adding traffic in one direction does not shift the other's randomness.
std::mt19937_64 derive_rng(std::uint64_t seed, std::uint64_t salt) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(salt)};
  return std::mt19937_64(seq);
}
}  // namespace

Dumbbell::Dumbbell(EventLoop& loop, const DumbbellConfig& config)
    : config_(config),
      forward_rng_(derive_rng(config.seed, 1)),
      reverse_rng_(derive_rng(config.seed, 2)),
      forward_(loop, config.forward, &forward_rng_, [this](Packet p) { deliver(std::move(p)); }),
      reverse_(loop, config.reverse, &reverse_rng_, [this](Packet p) { deliver(std::move(p)); }),
      left_receivers_(config.hosts_per_side),
      right_receivers_(config.hosts_per_side) {
  if (config.hosts_per_side == 0 || config.hosts_per_side > 0xFFFF)
    throw std::invalid_argument("Dumbbell: hosts_per_side outside [1, 65535]");
}

Address Dumbbell::left(std::size_t i) const {
  if (i >= config_.hosts_per_side) throw std::out_of_range("Dumbbell::left");
  return kLeftBase + static_cast<Address>(i);
}

Address Dumbbell::right(std::size_t i) const {
  if (i >= config_.hosts_per_side) throw std::out_of_range("Dumbbell::right");
  return kRightBase + static_cast<Address>(i);
}

std::optional<Dumbbell::Host> Dumbbell::locate(Address a) const {
  if (a >= kLeftBase && a - kLeftBase < config_.hosts_per_side) return Host{Side::left, a - kLeftBase};
  if (a >= kRightBase && a - kRightBase < config_.hosts_per_side)
    return Host{Side::right, a - kRightBase};
  return std::nullopt;
}

void Dumbbell::attach(Address address, Receiver receiver) {
  const auto host = locate(address);
  if (!host) throw std::invalid_argument("Dumbbell::attach: unknown address");
  auto& receivers = host->side == Side::left ? left_receivers_ : right_receivers_;
  receivers[host->index] = std::move(receiver);
}

void Dumbbell::send(Packet packet) {
  const auto src = locate(packet.src);
  const auto dst = locate(packet.dst);
  if (!src || !dst) throw std::invalid_argument("Dumbbell::send: unknown address");
  if (src->side == dst->side) throw std::invalid_argument("Dumbbell::send: same side");
  (src->side == Side::left ? forward_ : reverse_).send(std::move(packet));
}

void Dumbbell::deliver(Packet packet) {
  const auto dst = locate(packet.dst);
  auto& receivers = dst->side == Side::left ? left_receivers_ : right_receivers_;
  auto& receiver = receivers[dst->index];
  if (!receiver) {
    ++undeliverable_;
    return;
  }
  receiver(std::move(packet));
}

}  // namespace egw::sim
