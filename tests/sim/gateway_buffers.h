// The gateway's stream and connection buffers (config/gateway_config.cc
// apply_limits with the default Limits), for simulator runs that must see
// what the product does. `grow` false is the fixed 256 KiB window every
// release before issue 20 had.
#pragma once

#include "tunnel/connection.h"

namespace egw::sim {

inline void gateway_buffers(tunnel::ConnectionConfig& c, bool grow) {
  c.stream_receive_window_bytes = 256 * 1024;
  c.stream_receive_window_max_bytes = grow ? 16 << 20 : 0;
  c.stream_send_buffer_bytes = 256 * 1024;
  c.stream_send_buffer_max_bytes = grow ? 16 << 20 : 0;
  c.connection_receive_window_bytes = 64 << 20;
  c.connection_send_buffer_bytes = 64 << 20;
}

}  // namespace egw::sim
