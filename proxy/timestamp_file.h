// The hub's replay memory on disk (tunnel/session/timestamp_store.h): each
// peer's greatest accepted initiation timestamp, one line per peer,
//
//   <peer public key, base64> <TAI64N, 24 hex digits>
//
// rewritten atomically (common/atomic_file.h: temporary file, fsync,
// rename, fsync of the directory) before the session answers, so a restart,
// even a crash right after an answer, never accepts an initiation again.
// Written only for a configured peer's authenticated, newer initiation:
// a handful of writes per peer every two minutes. A missing file is an empty
// memory; an unreadable or corrupt one is reported (load_error) and then
// rewritten by the first handshake.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "tunnel/session/timestamp_store.h"

namespace egw::proxy {

class TimestampFile final : public tunnel::session::TimestampStore {
 public:
  explicit TimestampFile(std::filesystem::path path);

  std::optional<tunnel::session::Timestamp> load(const tunnel::crypto::Key32& peer) override;
  bool store(const tunnel::crypto::Key32& peer, const tunnel::session::Timestamp& timestamp) override;

  const std::filesystem::path& path() const { return path_; }
  // Why the file could not be read or parsed at start; the last write error.
  const std::optional<std::string>& load_error() const { return load_error_; }
  const std::optional<std::string>& write_error() const { return write_error_; }

 private:
  std::filesystem::path path_;
  std::map<tunnel::crypto::Key32, tunnel::session::Timestamp> greatest_;
  std::optional<std::string> load_error_;
  std::optional<std::string> write_error_;
};

}  // namespace egw::proxy
