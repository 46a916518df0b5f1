// Deterministic stream content and the two ends that move it, so every
// application checks every byte it receives without storing what was sent.
//
// Byte `offset` of the content of stream `id` is byte (offset % 8) of
// splitmix64(id * 2^40 + offset / 8): cheap (one mix per 8 bytes), and a
// duplicated, dropped or misplaced chunk changes the bytes at its offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/units.h"
#include "tunnel/connection.h"

namespace egw::sim {

void fill_content(StreamId id, std::uint64_t offset, std::span<std::byte> out);
// Bytes of `data` (found at `offset` of stream `id`) that differ from the content.
std::uint64_t count_mismatches(StreamId id, std::uint64_t offset, std::span<const std::byte> data);

// Writes content bytes [0, total) of a stream, then FIN. Content is generated
// one chunk at a time and kept until the stream accepted all of it.
class ContentWriter {
 public:
  ContentWriter(StreamId id, ByteCount total_bytes) : id_(id), total_(total_bytes) {}
  // Writes what the stream accepts; sends FIN after the last byte. Returns
  // true once everything and the FIN went to the connection.
  bool pump(tunnel::Connection& conn, Instant now);
  bool done() const { return finished_; }
  ByteCount written_bytes() const { return written_; }

 private:
  static constexpr std::size_t kChunkBytes = 16 * 1024;
  StreamId id_;
  ByteCount total_;
  ByteCount written_ = 0;
  std::vector<std::byte> chunk_;  // content [written_ - chunk_pos_, ... + chunk_.size())
  std::size_t chunk_pos_ = 0;
  bool finished_ = false;
};

// Reads a stream to its FIN, checking each byte against the content.
class ContentReader {
 public:
  explicit ContentReader(StreamId id) : id_(id) {}
  // Reads everything readable now through `scratch`; returns the bytes read.
  std::size_t pump(tunnel::Connection& conn, std::span<std::byte> scratch, Instant now);
  ByteCount bytes() const { return bytes_; }
  bool fin() const { return fin_; }
  std::uint64_t mismatches() const { return mismatches_; }

 private:
  StreamId id_;
  ByteCount bytes_ = 0;
  bool fin_ = false;
  std::uint64_t mismatches_ = 0;
};

}  // namespace egw::sim
