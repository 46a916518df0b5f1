// `ensemble-gw status --json`: a GatewaySnapshot as one JSON object, for
// scripts and health checks. Pure formatting; the status socket serves it
// to clients that ask for it (proxy/status_socket.h).
//
// Field names are the snapshot's (proxy/gateway_snapshot.h); per-class
// values are objects keyed by class (html ... streaming); reasons are objects keyed
// by reason; an unset ssthresh is null. Strings are escaped, and bytes that
// are not UTF-8 (a peer name is whatever the config says) become U+FFFD, so
// the output is always valid JSON (RFC 8259).
#pragma once

#include <cstddef>
#include <string>

#include "proxy/gateway_snapshot.h"

namespace egw::proxy {

// At most `max_bytes` (if the lists fit at all): streams and UDP flows are
// left out from the end of the longer list, and counted in streams_omitted
// or udp_flows_omitted, until it fits.
std::string render_status_json(GatewaySnapshot snapshot, std::size_t max_bytes);

}  // namespace egw::proxy
