// The server name (SNI) and ALPN of a QUIC connection, read from the
// client's first datagrams, so a UDP 443 flow can be classified like a TLS
// stream before the server has answered.
//
// Never decrypts anything but a client's Initial packets: their keys derive
// from public values, a version's salt and the Destination Connection ID the
// client chose (RFC 9001 5.2, RFC 9369 3.3), so any on-path observer can read
// them; Handshake, 0-RTT and 1-RTT packets are stepped over unread.
// QUIC v1 (RFC 9000/9001) and v2 (RFC 9369); other versions are not_quic.
//
// Sans-IO and incremental: feed the flow's client datagrams in arrival order
// until the answer is not need_more. The ClientHello travels in CRYPTO frames
// that may come out of order, within one packet or across coalesced packets
// and datagrams (Chrome's, with a post-quantum key share, needs two
// Initials); they are reassembled by offset into at most
// kQuicCryptoBufferBytes, over at most kQuicInitialDatagrams datagrams.
// Hostile input: every length is checked before use, a packet that fails
// authentication is ignored, and malformed frames end the scan (not_quic).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace egw::proxy {

// 16 KiB: as for a TLS stream (kClientHelloScanBytes); ClientHellos seen in
// practice are under 2 KB.
inline constexpr std::size_t kQuicCryptoBufferBytes = 16 * 1024;
// Chrome and Firefox need 1 or 2; a few more for retransmitted Initials.
inline constexpr std::size_t kQuicInitialDatagrams = 8;

inline constexpr std::uint32_t kQuicVersion1 = 0x00000001;
inline constexpr std::uint32_t kQuicVersion2 = 0x6b3343cf;

enum class QuicStatus {
  need_more,  // Initials so far, the ClientHello not complete yet
  not_quic,   // the first datagram is no authentic v1/v2 client Initial, or its contents are malformed
  no_sni,     // a ClientHello without a usable host name, or none within the caps
  found,
};

struct QuicInitialScan {
  QuicStatus status = QuicStatus::need_more;
  std::uint32_t version = 0;      // of the first Initial, once one has been read
  std::string host;               // found: as SniScan::host (lowercase, host name characters)
  std::vector<std::string> alpn;  // found or no_sni: the client's ALPN names ("h3"), printable ASCII
};

// The client's Initial keys for a version and Destination Connection ID
// (RFC 9001 5.2, RFC 9369 3.3); false for another version or if OpenSSL fails.
struct QuicInitialKeys {
  std::array<std::uint8_t, 16> key{};  // AES-128-GCM
  std::array<std::uint8_t, 12> iv{};
  std::array<std::uint8_t, 16> hp{};  // header protection, AES-128-ECB
};
bool quic_client_initial_keys(std::uint32_t version, std::span<const std::byte> dcid, QuicInitialKeys& keys);

class QuicInitialReader {
 public:
  // One client datagram (a UDP payload). Once the answer is not need_more it
  // is final: further datagrams are not looked at.
  const QuicInitialScan& add_datagram(std::span<const std::byte> udp_payload);
  const QuicInitialScan& result() const { return result_; }

 private:
  struct Packet;
  // Every packet of the datagram; false if it held no authentic Initial.
  bool read_datagram(std::span<const std::byte> datagram);
  bool read_initial(std::span<const std::byte> datagram, const Packet& packet);
  bool read_frames(std::span<const std::byte> payload);
  bool add_crypto(std::uint64_t offset, std::span<const std::byte> data);
  void finish_if_complete();
  void end(QuicStatus status) { result_.status = status; }

  QuicInitialScan result_;
  std::size_t datagrams_ = 0;
  // The keys of the last Destination Connection ID seen (a client keeps one
  // until the server answers; a new one after a Retry).
  std::vector<std::byte> keys_dcid_;
  std::uint32_t keys_version_ = 0;
  QuicInitialKeys keys_;
  std::vector<std::uint8_t> packet_;  // the packet being decrypted, in place
  // The CRYPTO stream: its bytes by offset, and the ranges received
  // (sorted, disjoint, merged; at most 32 before the scan gives up).
  std::vector<std::byte> crypto_;
  std::vector<std::pair<std::size_t, std::size_t>> ranges_;
};

// All at once: the datagrams a client sent first, in order.
QuicInitialScan scan_quic_initials(std::span<const std::span<const std::byte>> datagrams);

}  // namespace egw::proxy
