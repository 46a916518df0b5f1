// `ensemble-gw status`: a GatewaySnapshot as text for a person at a terminal.
// Pure formatting; the status socket (proxy/status_socket.h) serves it.
#pragma once

#include <string>

#include "proxy/gateway_snapshot.h"

namespace egw::proxy {

// A header (role, uptime, connections, memory, refusals, drops, cache,
// reloads), a table of ensembles (peer, state, cwnd, ssthresh, srtt, in
// flight, losses, open streams by class), the bytes per second of each class
// when the snapshot has rates, then a table of the listed streams
// (id, client, destination, class, state, bytes each way, age) and
// "... and N more" for those the snapshot left out, then the UDP flows
// (peer, flow, source, destination, class, datagrams and bytes each way,
// drops by deadline and by a full queue, idle time; "... and N more UDP
// flows") once the gateway has carried any. Control characters in
// names are shown as '?': the text goes to a terminal.
std::string render_status(const GatewaySnapshot& snapshot);

}  // namespace egw::proxy
