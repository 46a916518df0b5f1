// Writes the fuzz seed corpus: one file per payload, each a valid frame
// sequence the fuzzers can mutate from (every frame type, edge values).
// Usage: fuzz_seed_corpus <directory>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tunnel/frame_codec.h"
#include "tunnel/varint.h"
#include "tunnel/wire_writer.h"

using namespace egw;
using namespace egw::tunnel;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
    return 2;
  }
  const std::vector<std::byte> data(40, std::byte{'d'});
  const std::vector<std::byte> big(1300, std::byte{'D'});
  Destination v4;
  v4.address = {10, 0, 0, 1};
  v4.port = 443;
  Destination v6;
  v6.family = Destination::Family::ipv6;
  v6.address = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  v6.port = 8443;

  const std::vector<std::pair<std::string, std::vector<Frame>>> seeds = {
      {"ping_padding", {PingFrame{}, PaddingFrame{8}}},
      {"ack_one_range", {AckFrame{us(25'000), {{0, 10}}, {}}}},
      {"ack_timestamped", {AckFrame{us(1'234), {{90, 100}, {40, 60}}, us(987'654)}}},
      {"ack_many_ranges",
       {AckFrame{us(3), {{1000, 1010}, {900, 950}, {500, 600}, {64, 64}, {0, 3}}, {}}}},
      {"stream_open_v4", {StreamOpenFrame{0, v4, ContentClass::html}}},
      {"stream_open_v6", {StreamOpenFrame{1, v6, ContentClass::image}}},
      {"stream_data", {StreamFrame{4, 16'384, false, data}}},
      {"stream_fin_edge", {StreamFrame{8, kVarintMax - 40, true, data}}},
      {"reset", {ResetStreamFrame{4, 2, 100'000}}},
      {"credits", {MaxDataFrame{16 << 20}, MaxStreamDataFrame{4, 1 << 20}}},
      {"class", {StreamClassFrame{4, ContentClass::script}}},
      {"close", {CloseFrame{7, "going away"}}},
      {"max_streams", {MaxStreamsFrame{1024}}},
      {"flow_open_datagram",
       {FlowOpenFrame{0, v4, ContentClass::html}, DatagramFrame{0, data}, DatagramFrame{0, {}}}},
      {"flow_open_v6_close", {FlowOpenFrame{3, v6, ContentClass::bulk}, FlowCloseFrame{3, 0x12}}},
      // Datagram flows with the categories, a packet of datagrams alone (as
      // a packet of a flow whose FLOW_OPEN was acknowledged), a full-size
      // one, and a flow's whole life in one payload.
      {"flow_open_realtime_datagrams",
       {FlowOpenFrame{2, v4, ContentClass::realtime}, DatagramFrame{2, data}, DatagramFrame{2, data}}},
      {"flow_open_each_category",
       {FlowOpenFrame{4, v4, ContentClass::interactive}, FlowOpenFrame{6, v6, ContentClass::web},
        FlowOpenFrame{8, v4, ContentClass::streaming}}},
      {"datagrams_only", {DatagramFrame{1, data}, DatagramFrame{kVarintMax, {}}, PingFrame{}}},
      {"datagram_large", {DatagramFrame{0x4000, big}}},
      {"flow_life",
       {AckFrame{us(10), {{5, 9}}, {}}, FlowOpenFrame{10, v4, ContentClass::realtime}, DatagramFrame{10, data},
        FlowCloseFrame{10, 0}, DatagramFrame{10, data}}},
      {"class_categories", {StreamClassFrame{4, ContentClass::realtime}, StreamClassFrame{6, ContentClass::streaming}}},
      {"mixed",
       {AckFrame{us(100), {{50, 60}}, {}}, StreamOpenFrame{2, v4, ContentClass::bulk},
        StreamFrame{2, 0, true, data}, MaxDataFrame{99}, PingFrame{}}},
  };
  for (const auto& [name, frames] : seeds) {
    std::vector<std::byte> out;
    WireWriter writer(out);
    for (const Frame& f : frames) encode_frame(writer, f);
    if (!writer.ok()) return 1;
    std::ofstream file(std::string(argv[1]) + "/" + name, std::ios::binary);
    file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  }
  return 0;
}
