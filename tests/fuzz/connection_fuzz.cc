// Fuzz target: a hostile peer that holds the key. The input is a script of
// operations (tests/fuzz/hostile_peer_driver.h): authentic packets with
// fuzzed or generated frames, raw datagrams, time passing, the hub's app
// reading, writing and resetting streams. Passing means no crash, no
// sanitizer report, no timeout or memory blow-up, and every invariant the
// driver checks after each operation holds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "tests/fuzz/hostile_peer_driver.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egw::tunnel::fuzzing::HostilePeerDriver driver(std::as_bytes(std::span(data, size)));
  if (auto violation = driver.run()) {
    std::fprintf(stderr, "hostile peer invariant violated: %s\n", violation->c_str());
    std::abort();
  }
  return 0;
}
