#include "proxy/classifier_cache.h"

#include <cstring>

namespace egw::proxy {

std::size_t ClassifierCache::Hash::operator()(const tunnel::Destination& d) const {
  // FNV-1a over the address, port and family: destinations are not chosen
  // by an attacker who could aim at collisions any better than at the bound.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint8_t b) { h = (h ^ b) * 1099511628211ull; };
  for (std::uint8_t b : d.address) mix(b);
  mix(static_cast<std::uint8_t>(d.port >> 8));
  mix(static_cast<std::uint8_t>(d.port));
  mix(static_cast<std::uint8_t>(d.family));
  return static_cast<std::size_t>(h);
}

void ClassifierCache::learn(const tunnel::Destination& destination, Entry entry) {
  if (capacity_ == 0) return;
  if (auto it = index_.find(destination); it != index_.end()) {
    it->second->second = entry;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (index_.size() >= capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(destination, entry);
  index_.emplace(destination, lru_.begin());
}

std::optional<ClassifierCache::Entry> ClassifierCache::find(const tunnel::Destination& destination) {
  auto it = index_.find(destination);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

}  // namespace egw::proxy
