#include "tests/sim/stream_content.h"

#include <algorithm>
#include <cstring>

namespace egw::sim {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
std::uint64_t content_word(StreamId id, std::uint64_t word_index) {
  return splitmix64((id << 40) + word_index);
}
}  // namespace

// Both loops below touch every byte of every simulated stream: they work on
// raw pointers and whole words so -O0 sanitizer builds stay fast.
void fill_content(StreamId id, std::uint64_t offset, std::span<std::byte> out) {
  std::byte* p = out.data();
  const std::size_t n = out.size();
  std::size_t i = 0;
  while (i < n) {
    const std::uint64_t at = offset + i;
    const std::uint64_t word = content_word(id, at / 8);
    for (std::uint64_t b = at % 8; b < 8 && i < n; ++b, ++i) {
      p[i] = static_cast<std::byte>(word >> (8 * b));
    }
  }
}

std::uint64_t count_mismatches(StreamId id, std::uint64_t offset, std::span<const std::byte> data) {
  const std::byte* p = data.data();
  const std::size_t n = data.size();
  std::uint64_t mismatches = 0;
  std::size_t i = 0;
  while (i < n) {
    const std::uint64_t at = offset + i;
    const std::uint64_t word = content_word(id, at / 8);
    for (std::uint64_t b = at % 8; b < 8 && i < n; ++b, ++i) {
      mismatches += p[i] != static_cast<std::byte>(word >> (8 * b));
    }
  }
  return mismatches;
}

bool ContentWriter::pump(tunnel::Connection& conn, Instant now) {
  while (written_ < total_) {
    if (chunk_pos_ == chunk_.size()) {  // refill from the current offset
      chunk_.resize(static_cast<std::size_t>(std::min<ByteCount>(kChunkBytes, total_ - written_)));
      fill_content(id_, written_, chunk_);
      chunk_pos_ = 0;
    }
    const std::size_t accepted =
        conn.stream_write(id_, std::span<const std::byte>(chunk_).subspan(chunk_pos_), now);
    if (accepted == 0) return false;  // wait for StreamWritable
    chunk_pos_ += accepted;
    written_ += accepted;
  }
  if (!finished_) {
    conn.stream_finish(id_, now);
    finished_ = true;
  }
  return true;
}

std::size_t ContentReader::pump(tunnel::Connection& conn, std::span<std::byte> scratch, Instant now) {
  std::size_t total = 0;
  while (!fin_) {
    bool fin = false;
    const std::size_t n = conn.stream_read(id_, scratch, &fin, now);
    mismatches_ += count_mismatches(id_, bytes_, scratch.first(n));
    bytes_ += n;
    total += n;
    fin_ = fin;
    if (n == 0) break;
  }
  return total;
}

}  // namespace egw::sim
