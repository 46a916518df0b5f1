// Where a transparently intercepted client was going. The nftables REDIRECT
// (proxy/nft_table.h) rewrote the connection's destination to our listener;
// conntrack still holds the original, and SO_ORIGINAL_DST reads it back.
#pragma once

#include <optional>
#include <string>

#include "tunnel/frames.h"

namespace egw::proxy {

// The destination the client meant, for a socket accepted on a REDIRECT
// listener: SO_ORIGINAL_DST (IPv4) or IP6T_SO_ORIGINAL_DST (IPv6); a
// v4-mapped connection on a dual-stack [::] listener uses the IPv4 option.
// A connection that was tracked but not redirected gives its own local
// address (see is_listener_itself). nullopt, with the reason in *error, when
// conntrack has no entry for it (not loaded here, or the flow is untracked).
std::optional<tunnel::Destination> original_destination(int fd, std::string* error = nullptr);

// True if `d` is one of the listener's own addresses and its port: a client
// that connected to the listener directly instead of being redirected. The
// gateway must refuse it, or it would connect to itself in a loop. A wildcard
// listener owns every local address (of its family; [::] of both).
bool is_listener_itself(const tunnel::Destination& d, int listener_fd);

// "10.0.0.1:80", "[2001:db8::1]:443", for logs.
std::string format_destination(const tunnel::Destination& d);

}  // namespace egw::proxy
