#include "tests/alloc/counting_allocator.h"

#include <cstdlib>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <cstring>
#include <new>

namespace egw::alloc_test {
namespace {
thread_local int current_side = 0;
AllocCounters global_counters;

// Header in front of every block: its size and the side it is charged to.
// 16 bytes keeps the default new alignment; over-aligned requests use a
// header as large as their alignment.
struct Header {
  std::size_t size;
  std::int32_t side;
  std::int32_t offset;  // bytes from the malloc'd block to the user pointer
};

// Is an egw::congestion function on the stack? (The binary is linked with
// -rdynamic so dladdr can name its functions.) The ensemble never calls back
// into the tunnel, so such an allocation is the congestion layer's own.
bool in_congestion_layer() {
  void* frames[48];
  const int n = backtrace(frames, 48);
  for (int i = 1; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_sname &&
        std::strstr(info.dli_sname, "3egw10congestion")) {
      return true;
    }
  }
  return false;
}

void* allocate(std::size_t size, std::size_t alignment) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  const std::size_t header = alignment >= sizeof(Header) ? alignment : sizeof(Header) * 2;
  void* raw = std::aligned_alloc(alignment, (header + size + alignment - 1) / alignment * alignment);
  if (!raw) throw std::bad_alloc();
  auto* user = static_cast<unsigned char*>(raw) + header;
  auto* h = reinterpret_cast<Header*>(user - sizeof(Header));
  const bool congestion = global_counters.attributing && in_congestion_layer();
  // Diagnosis: EGW_ALLOC_DEBUG=1 prints each attributed allocation's size,
  // side and innermost egw function (pipe through c++filt | sort | uniq -c).
  if (global_counters.attributing && std::getenv("EGW_ALLOC_DEBUG")) {
    void* frames[48];
    const int n = backtrace(frames, 48);
    for (int i = 1; i < n; ++i) {
      Dl_info info;
      if (dladdr(frames[i], &info) && info.dli_sname && std::strstr(info.dli_sname, "3egw") &&
          !std::strstr(info.dli_sname, "alloc_test")) {
        std::fprintf(stderr, "ALLOC %zu %d %s\n", size, current_side, info.dli_sname);
        break;
      }
    }
  }
  // Congestion-layer blocks are charged to side + kSides.
  const int charged = current_side + (congestion ? kSides : 0);
  h->size = size;
  h->side = charged;
  h->offset = static_cast<std::int32_t>(header);
  ++global_counters.allocations;
  if (congestion) ++global_counters.congestion_allocations;
  global_counters.live_bytes[charged] += static_cast<std::int64_t>(size);
  return user;
}

void release(void* p) noexcept {
  if (!p) return;
  auto* user = static_cast<unsigned char*>(p);
  auto* h = reinterpret_cast<Header*>(user - sizeof(Header));
  ++global_counters.deallocations;
  global_counters.live_bytes[h->side] -= static_cast<std::int64_t>(h->size);
  std::free(user - h->offset);
}
}  // namespace

AllocCounters& counters() { return global_counters; }

void warm_up_attribution() {
  // backtrace() loads its unwinder on first use: do that outside a count.
  void* frames[4];
  backtrace(frames, 4);
}
void set_side(int s) { current_side = s; }
int side() { return current_side; }

}  // namespace egw::alloc_test

using egw::alloc_test::allocate;
using egw::alloc_test::release;

void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new[](std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  return allocate(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return allocate(size, static_cast<std::size_t>(a));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try { return allocate(size, 0); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try { return allocate(size, 0); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
