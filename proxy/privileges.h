// After start the gateway keeps only what it still needs: CAP_NET_ADMIN
// (replacing its nftables table on SIGHUP, SO_RCVBUFFORCE), and no other
// capability, as the user the config names (`user:`).
//
// Started as root: switches to `user` (its uid, gid, no supplementary
// groups) keeping CAP_NET_ADMIN across the switch, or stays uid 0 without
// `user`; either way every other capability goes from the effective,
// permitted, inheritable and ambient sets and from the bounding set, and
// no_new_privs is set, so nothing it could exec regains them.
// Started unprivileged with a file capability (the image, the systemd
// unit: cap_net_admin only): already confined, so this is a no-op that does
// not fail (the bounding set needs CAP_SETPCAP to shrink and is left as is).
//
// Call it before any other thread exists: capabilities are per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace egw::proxy {

struct PrivilegeDrop {
  std::optional<std::string> error;  // set: the gateway must not run
  std::string summary;               // "uid 65534, gid 65534, capabilities: cap_net_admin, ..."
};

// `also_keep`: more capabilities (a bit mask by CAP_* number) to keep beside
// CAP_NET_ADMIN: CAP_NET_BIND_SERVICE for a branch whose UDP flows answer
// from ports below 1024 (udp.ports with DNS, carry_quic; proxy/udp_branch.h).
PrivilegeDrop drop_privileges(const std::string& user, std::uint64_t also_keep = 0);

}  // namespace egw::proxy
