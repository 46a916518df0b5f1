// SealSource: a part of a packet's plaintext that is not in the packet yet
// but elsewhere (a stream's send ring), for sealing out of place: the AEAD
// encrypts it from there straight into the packet, so stream bytes are not
// copied into the packet first (PacketProtection::seal_gather,
// crypto::AeadKey::seal_gather). Its own header so the protocol core and the
// crypto share it without depending on each other.
#pragma once

#include <cstddef>
#include <span>

namespace egw::tunnel {

struct SealSource {
  std::size_t offset = 0;             // in the plaintext (after the packet header)
  std::span<const std::byte> bytes;   // what goes there
};

}  // namespace egw::tunnel
