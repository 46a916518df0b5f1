// Where a responder keeps each peer's greatest accepted initiation timestamp
// across restarts (issue 19 item 4). In memory only, a hub that restarted
// accepted any captured initiation once: it answered, believed the session
// up, and the branch's next rekey was taken for a rekey of that phantom.
//
// The sans-IO core does no I/O: the driver implements this interface (a file
// written atomically, proxy/timestamp_file.h) and the session calls it
// synchronously, *before* it answers an initiation, so a replay of anything
// ever answered is refused even after a crash right after the answer.
#pragma once

#include <optional>

#include "tunnel/crypto/keys.h"
#include "tunnel/session/handshake_messages.h"

namespace egw::tunnel::session {

class TimestampStore {
 public:
  virtual ~TimestampStore() = default;
  // The greatest timestamp this peer's initiations had in an earlier run.
  virtual std::optional<Timestamp> load(const crypto::Key32& peer_public_key) = 0;
  // Records `timestamp` as the peer's greatest, durably; false if it could
  // not (the initiation is then not answered: the branch retries).
  virtual bool store(const crypto::Key32& peer_public_key, const Timestamp& timestamp) = 0;
};

}  // namespace egw::tunnel::session
