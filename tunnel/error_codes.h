// Error codes carried by CLOSE (connection errors) and RESET (stream errors),
// and reported in ConnectionClosed / StreamReset events. Modelled on RFC 9000
// section 20.1; values are this protocol's own.
#pragma once

#include <cstdint>

namespace egw::tunnel {

// Connection errors (CLOSE).
inline constexpr std::uint64_t kErrorNone = 0x0;
inline constexpr std::uint64_t kErrorProtocolViolation = 0x1;  // wrong stream parity, bad ACK...
inline constexpr std::uint64_t kErrorFlowControl = 0x2;        // data beyond our credit
inline constexpr std::uint64_t kErrorFinalSize = 0x3;          // data contradicts a final size
inline constexpr std::uint64_t kErrorExcessiveLoad = 0x4;      // a network-driven cap was hit
// Never on the wire: the connection went silent for idle_timeout.
inline constexpr std::uint64_t kErrorIdleTimeout = 0x5;
// The peer used a stream id beyond the MAX_STREAMS we advertised.
inline constexpr std::uint64_t kErrorStreamLimit = 0x6;

// Stream errors (RESET).
// The peer opened more than max_incoming_streams streams (a defence only:
// MAX_STREAMS keeps an honest peer below it).
inline constexpr std::uint64_t kErrorStreamRefused = 0x10;

// Stream errors of the gateway (proxy/): why a proxied TCP connection was
// reset. The branch resets its client's socket on any of them.
inline constexpr std::uint64_t kErrorTcpReset = 0x11;             // a TCP side reset or failed
inline constexpr std::uint64_t kErrorDestinationRefused = 0x12;   // not allowed for this peer
inline constexpr std::uint64_t kErrorConnectFailed = 0x13;        // the server refused / unreachable
inline constexpr std::uint64_t kErrorConnectTimeout = 0x14;       // no answer within connect_timeout
inline constexpr std::uint64_t kErrorGatewayLimit = 0x15;         // memory or connection limit
inline constexpr std::uint64_t kErrorGatewayShutdown = 0x16;      // drained too long at shutdown

}  // namespace egw::tunnel
