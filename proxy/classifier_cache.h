// The classifier's learned cache: destination address and port -> the
// application and category an SNI decision gave it, so that a later
// connection to the same place without a usable SNI (none, Encrypted Client
// Hello, a server-first protocol, a resumed session) gets the same class.
// Bounded, least recently used out first; O(1) per lookup and insert (one
// hash lookup), touched once per new connection, never per packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "common/content_class.h"
#include "tunnel/frames.h"

namespace egw::proxy {

class ClassifierCache {
 public:
  struct Entry {
    std::string_view application;  // static storage (nDPI's names, literals)
    ContentClass category;
  };
  explicit ClassifierCache(std::size_t capacity) : capacity_(capacity) {}

  void learn(const tunnel::Destination& destination, Entry entry);
  std::optional<Entry> find(const tunnel::Destination& destination);
  std::size_t size() const { return index_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  struct Hash {
    std::size_t operator()(const tunnel::Destination& d) const;
  };
  using Item = std::pair<tunnel::Destination, Entry>;
  std::size_t capacity_;
  std::list<Item> lru_;  // most recent first
  std::unordered_map<tunnel::Destination, std::list<Item>::iterator, Hash> index_;
};

}  // namespace egw::proxy
