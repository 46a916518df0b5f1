// The one place where files are read and written (congestion/ and tunnel/
// stay I/O-free): the driver persists state such as the temporal cache here.
//
// write_file_atomically follows the usual POSIX recipe, so a crash or power
// loss leaves either the old file or the new one, never a torn mix:
//   1. write the contents to a fresh temporary file in the same directory
//      (rename(2) is only atomic within one file system);
//   2. fsync(2) it, so its data is durable before it gets the real name;
//   3. rename(2) it over the target;
//   4. fsync(2) the directory, so the rename itself is durable.
// The file is created with mode 0600 (cached path state is nobody else's).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace egw {

// 16 MiB: far above a full temporal cache (~1024 lines of ~100 bytes).
inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t{16} << 20;

// Returns true on success; on failure returns false, leaves the target as it
// was, removes the temporary file and, when `error` is non-null, says why.
bool write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           std::string* error);

// The whole file, or nullopt with a reason in `error` (when non-null) if it
// cannot be read, is not a regular file, or is larger than `max_bytes`.
std::optional<std::string> read_file(const std::filesystem::path& path, std::string* error,
                                     std::size_t max_bytes = kDefaultMaxFileBytes);

}  // namespace egw
