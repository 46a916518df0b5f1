// Receiver indices: the 32-bit names each side picks for its handshakes and
// the keys they produce (WireGuard's sender/receiver index). A datagram's
// index finds its session in one lookup. Random, so they say nothing about
// how many sessions a gateway has; 0 is never used (it means "none").
#pragma once

#include <openssl/rand.h>

#include <cstdint>
#include <cstdlib>
#include <unordered_map>

namespace egw::tunnel::session {

class Session;

class IndexTable {
 public:
  std::uint32_t allocate(Session* owner) {
    for (;;) {
      std::uint32_t index = 0;
      if (RAND_bytes(reinterpret_cast<unsigned char*>(&index), sizeof index) != 1) std::abort();
      if (index != 0 && owners_.emplace(index, owner).second) return index;
    }
  }
  void release(std::uint32_t index) {
    if (index != 0) owners_.erase(index);
  }
  Session* find(std::uint32_t index) const {
    const auto it = owners_.find(index);
    return it == owners_.end() ? nullptr : it->second;
  }
  std::size_t size() const { return owners_.size(); }

 private:
  std::unordered_map<std::uint32_t, Session*> owners_;
};

}  // namespace egw::tunnel::session
