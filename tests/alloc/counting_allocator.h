// A counting global operator new/delete for tests/alloc only (its own test
// binary, so the replacement never leaks into other tests). Each allocation
// carries a small header with its size and the "side" (a thread-local tag
// the test sets before calling into one Connection), so live bytes can be
// attributed to the client or the hub even though both run in one process.
#pragma once

#include <cstddef>
#include <cstdint>

namespace egw::alloc_test {

inline constexpr int kSides = 3;  // 0: harness, 1: client, 2: hub

struct AllocCounters {
  std::uint64_t allocations = 0;
  std::uint64_t deallocations = 0;
  // While set, allocations made inside egw::congestion are also counted
  // apart (slow: a stack walk per allocation).
  bool attributing = false;
  std::uint64_t congestion_allocations = 0;
  // Live bytes per side; [side + kSides]: blocks the congestion layer
  // allocated while `attributing` was set.
  std::int64_t live_bytes[2 * kSides] = {};
};

AllocCounters& counters();
void warm_up_attribution();
// Which side new allocations are charged to (thread-local).
void set_side(int side);
int side();

// Sets the side for a scope.
class SideScope {
 public:
  explicit SideScope(int s) : previous_(side()) { set_side(s); }
  ~SideScope() { set_side(previous_); }
  SideScope(const SideScope&) = delete;
  SideScope& operator=(const SideScope&) = delete;

 private:
  int previous_;
};

}  // namespace egw::alloc_test
