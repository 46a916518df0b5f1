#include "proxy/ndpi_detector.h"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

extern "C" {
#include <ndpi_api.h>
}

namespace egw::proxy {
namespace {

// Where nDPI's category is too coarse for a scheduling decision: by
// application (docs/config.md, "nDPI's applications"). Umbrella ids
// (Microsoft, Google, Apple) name a company's many services, not one use.
struct ProtocolCategory {
  std::uint16_t protocol_id;
  ContentClass category;
};
constexpr ProtocolCategory kByProtocol[] = {
    {NDPI_PROTOCOL_ZOOM, ContentClass::realtime},         // nDPI: Video
    {NDPI_PROTOCOL_SKYPE_TEAMS, ContentClass::realtime},  // VoIP already; listed for clarity
    {NDPI_PROTOCOL_MSTEAMS, ContentClass::realtime},      // Collaborative
    {NDPI_PROTOCOL_DISCORD, ContentClass::realtime},      // Collaborative: voice channels
    {NDPI_PROTOCOL_WHATSAPP_CALL, ContentClass::realtime},
    {NDPI_PROTOCOL_SIGNAL_VOIP, ContentClass::realtime},
    {NDPI_PROTOCOL_SLACK, ContentClass::interactive},     // Collaborative: chat
    {NDPI_PROTOCOL_MICROSOFT, ContentClass::web},         // Cloud: an umbrella
    {NDPI_PROTOCOL_MICROSOFT_365, ContentClass::web},     // Collaborative: web apps
    {NDPI_PROTOCOL_GOOGLE, ContentClass::web},
    {NDPI_PROTOCOL_APPLE, ContentClass::web},
    {NDPI_PROTOCOL_SALESFORCE, ContentClass::web},        // Cloud: a web application
    {NDPI_PROTOCOL_AMAZON_VIDEO, ContentClass::streaming},  // Cloud
    {NDPI_PROTOCOL_TIKTOK, ContentClass::streaming},      // SocialNetwork: short videos
    {NDPI_PROTOCOL_STEAM, ContentClass::bulk},            // Game: its TCP hosts are store and downloads
    {NDPI_PROTOCOL_APPLE_ICLOUD, ContentClass::bulk},     // Web: storage and backups
    {NDPI_PROTOCOL_SSH, ContentClass::interactive},
    {NDPI_PROTOCOL_DNS, ContentClass::interactive},
};

ContentClass category_of(int ndpi_category) {
  switch (static_cast<ndpi_protocol_category_t>(ndpi_category)) {
    case NDPI_PROTOCOL_CATEGORY_VOIP: return ContentClass::realtime;
    case NDPI_PROTOCOL_CATEGORY_CHAT:
    case NDPI_PROTOCOL_CATEGORY_REMOTE_ACCESS:
    case NDPI_PROTOCOL_CATEGORY_NETWORK:
    case NDPI_PROTOCOL_CATEGORY_RPC:
    case NDPI_PROTOCOL_CATEGORY_DATABASE:
    case NDPI_PROTOCOL_CATEGORY_GAME:
    case NDPI_PROTOCOL_CATEGORY_CONNECTIVITY_CHECK:
    case NDPI_PROTOCOL_CATEGORY_IOT_SCADA:
    case NDPI_PROTOCOL_CATEGORY_VIRTUAL_ASSISTANT: return ContentClass::interactive;
    case NDPI_PROTOCOL_CATEGORY_MEDIA:
    case NDPI_PROTOCOL_CATEGORY_STREAMING:
    case NDPI_PROTOCOL_CATEGORY_MUSIC:
    case NDPI_PROTOCOL_CATEGORY_VIDEO: return ContentClass::streaming;
    case NDPI_PROTOCOL_CATEGORY_DOWNLOAD_FT:
    case NDPI_PROTOCOL_CATEGORY_DATA_TRANSFER:
    case NDPI_PROTOCOL_CATEGORY_FILE_SHARING:
    case NDPI_PROTOCOL_CATEGORY_SW_UPDATE:
    case NDPI_PROTOCOL_CATEGORY_CLOUD: return ContentClass::bulk;
    default: return ContentClass::web;  // web, social, shopping, mail, collaborative, VPN, unspecified
  }
}

}  // namespace

ContentClass category_of_ndpi(std::uint16_t protocol_id, int ndpi_category) {
  for (const auto& p : kByProtocol) {
    if (p.protocol_id == protocol_id) return p.category;
  }
  return category_of(ndpi_category);
}

const NdpiDetector& NdpiDetector::shared() {
  static const NdpiDetector detector;  // thread-safe once; never freed (exit frees the process)
  return detector;
}

NdpiDetector::NdpiDetector() {
  const auto start = std::chrono::steady_clock::now();
  ndpi_ = ndpi_init_detection_module(ndpi_no_prefs);
  if (!ndpi_) throw std::runtime_error("nDPI: cannot initialise its detection module");
  NDPI_PROTOCOL_BITMASK all;
  NDPI_BITMASK_SET_ALL(all);
  ndpi_set_protocol_detection_bitmask2(ndpi_, &all);
  ndpi_finalize_initialization(ndpi_);
  init_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string_view NdpiDetector::version() { return ndpi_revision(); }

std::optional<AppMatch> NdpiDetector::match_of(std::uint16_t protocol_id) const {
  if (protocol_id == NDPI_PROTOCOL_UNKNOWN) return std::nullopt;
  ndpi_protocol p{};
  p.app_protocol = protocol_id;
  const ndpi_protocol_category_t c = ndpi_get_proto_category(ndpi_, p);
  const char* name = ndpi_get_proto_name(ndpi_, protocol_id);
  return AppMatch{name ? std::string_view(name) : std::string_view("unknown"), category_of_ndpi(protocol_id, c)};
}

std::optional<AppMatch> NdpiDetector::by_host(std::string_view host) const {
  // nDPI's names are domain suffixes with a leading dot (".zoom.us"): a
  // leading dot of our own makes the bare domain match too, and only at a
  // label boundary. Host names are at most 253 bytes.
  char buffer[256];
  if (host.empty() || host.size() + 1 >= sizeof buffer) return std::nullopt;
  buffer[0] = '.';
  std::memcpy(buffer + 1, host.data(), host.size());
  buffer[host.size() + 1] = '\0';
  ndpi_protocol_match_result result{};
  const int id = ndpi_match_string_subprotocol(ndpi_, buffer, static_cast<u_int>(host.size() + 1), &result);
  if (id <= 0) return std::nullopt;
  return match_of(static_cast<std::uint16_t>(id));
}

std::optional<AppMatch> NdpiDetector::by_address(const tunnel::Destination& destination) const {
  // nDPI 4.2's IP lists are IPv4 only.
  if (destination.family != tunnel::Destination::Family::ipv4) return std::nullopt;
  in_addr address{};
  std::memcpy(&address.s_addr, destination.address.data(), 4);  // network order already
  return match_of(ndpi_network_ptree_match(ndpi_, &address));
}

}  // namespace egw::proxy
