// ConnectionTotals: a session's connection counters summed over every
// connection it has had. A Connection's counters start from zero, and a
// session replaces its connection on every handshake that is not a rekey
// (the peer restarted, the old connection had closed, a dead peer came
// back); what the gateway exports as Prometheus counters must not go back
// then. The session banks each connection's final counts when it ends it
// (Session::end_connection, the one place a connection is destroyed) and
// adds the live connection's on top (Session::connection_totals()).
#pragma once

#include <cstdint>

#include "tunnel/connection.h"

namespace egw::tunnel::session {

struct ConnectionTotals {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_forged = 0;
  std::uint64_t datagrams_duplicate = 0;
  std::uint64_t datagrams_malformed = 0;
  std::uint64_t stream_bytes_retransmitted = 0;
  std::uint64_t thin_stream_copies = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds
  std::uint64_t tail_probes = 0;
  std::uint64_t rtos = 0;
  std::uint64_t ensembles_started = 0;
  std::uint64_t ensembles_resumed = 0;  // of those, started from the temporal cache
  std::uint64_t small_packets_sent = 0;  // built small while a call ran on a slow path
  std::uint64_t urgent_packets_sent = 0;  // on the urgent lane (PacketType::data_urgent)

  void add(const ConnectionStats& s) {
    datagrams_sent += s.datagrams_sent;
    datagrams_forged += s.datagrams_forged;
    datagrams_duplicate += s.datagrams_duplicate;
    datagrams_malformed += s.datagrams_malformed;
    stream_bytes_retransmitted += s.stream_bytes_retransmitted;
    thin_stream_copies += s.thin_stream_copies;
    packets_lost += s.packets_lost;
    loss_rounds += s.loss_rounds;
    random_loss_rounds += s.random_loss_rounds;
    tail_probes += s.tail_probes;
    rtos += s.rtos;
    ensembles_started += s.ensembles_started;
    ensembles_resumed += s.ensembles_resumed;
    small_packets_sent += s.small_packets_sent;
    urgent_packets_sent += s.urgent_packets_sent;
  }
};

}  // namespace egw::tunnel::session
