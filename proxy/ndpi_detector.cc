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
// application, keyed by nDPI's application name (stable across releases, its
// protocol ids are not), so libndpi 4.2 and the newer list (app_list.h) share
// it (docs/config.md, "nDPI's applications"). Umbrella applications
// (Microsoft, Google, Apple) name a company's many services, not one use.
struct ApplicationCategory {
  std::string_view application;
  ContentClass category;
};
constexpr ApplicationCategory kByApplication[] = {
    {"Zoom", ContentClass::realtime},          // nDPI: Video
    {"GoogleMeet", ContentClass::realtime},    // newer nDPI: Chat; a video call
    {"AdobeConnect", ContentClass::realtime},  // newer nDPI: Video; web conferencing
    {"Skype_Teams", ContentClass::realtime},   // VoIP already; listed for clarity
    {"Teams", ContentClass::realtime},         // Collaborative
    {"Discord", ContentClass::realtime},       // Collaborative: voice channels
    {"WhatsAppCall", ContentClass::realtime},
    {"SignalVoip", ContentClass::realtime},
    {"Slack", ContentClass::interactive},      // Collaborative: chat
    {"Microsoft", ContentClass::web},          // Cloud: an umbrella
    {"Microsoft365", ContentClass::web},       // Collaborative: web apps
    {"Google", ContentClass::web},
    {"Apple", ContentClass::web},
    {"Salesforce", ContentClass::web},         // Cloud: a web application
    {"Cloudflare", ContentClass::web},         // newer nDPI: Media for cdnjs; a CDN in front of many sites
    {"AmazonVideo", ContentClass::streaming},  // Cloud
    {"TikTok", ContentClass::streaming},       // SocialNetwork: short videos
    {"Steam", ContentClass::bulk},             // Game: its TCP hosts are store and downloads
    {"EpicGames", ContentClass::bulk},         // Game: a launcher like Steam, the same reason
    {"ElectronicArts", ContentClass::bulk},    // Game: a launcher like Steam, the same reason
    {"AppleiCloud", ContentClass::bulk},       // Web: storage and backups
    {"SSH", ContentClass::interactive},
    {"DNS", ContentClass::interactive},
};

// nDPI's category names (NDPI_PROTOCOL_CATEGORY_<name>) as the newer list
// spells them, to 4.2's values; a name 4.2 lacks (ADULT_CONTENT,
// CYBERSECURITY) falls to category_of's default, web.
struct CategoryName {
  std::string_view name;
  ndpi_protocol_category_t category;
};
#define EGW_CATEGORY(name) {#name, NDPI_PROTOCOL_CATEGORY_##name}
constexpr CategoryName kCategoryNames[] = {
    EGW_CATEGORY(VOIP), EGW_CATEGORY(CHAT), EGW_CATEGORY(REMOTE_ACCESS), EGW_CATEGORY(NETWORK),
    EGW_CATEGORY(RPC), EGW_CATEGORY(DATABASE), EGW_CATEGORY(GAME), EGW_CATEGORY(CONNECTIVITY_CHECK),
    EGW_CATEGORY(IOT_SCADA), EGW_CATEGORY(VIRTUAL_ASSISTANT), EGW_CATEGORY(MEDIA), EGW_CATEGORY(STREAMING),
    EGW_CATEGORY(MUSIC), EGW_CATEGORY(VIDEO), EGW_CATEGORY(DOWNLOAD_FT), EGW_CATEGORY(DATA_TRANSFER),
    EGW_CATEGORY(FILE_SHARING), EGW_CATEGORY(SW_UPDATE), EGW_CATEGORY(CLOUD), EGW_CATEGORY(WEB),
    EGW_CATEGORY(SOCIAL_NETWORK), EGW_CATEGORY(SHOPPING), EGW_CATEGORY(MAIL), EGW_CATEGORY(COLLABORATIVE),
    EGW_CATEGORY(VPN), EGW_CATEGORY(SYSTEM_OS), EGW_CATEGORY(PRODUCTIVITY),
};
#undef EGW_CATEGORY

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

ContentClass category_of_ndpi(std::string_view application, int ndpi_category) {
  for (const auto& a : kByApplication) {
    if (a.application == application) return a.category;
  }
  return category_of(ndpi_category);
}

ContentClass category_of_ndpi_name(std::string_view application, std::string_view ndpi_category_name) {
  for (const auto& c : kCategoryNames) {
    if (c.name == ndpi_category_name) return category_of_ndpi(application, c.category);
  }
  return category_of_ndpi(application, NDPI_PROTOCOL_CATEGORY_UNSPECIFIED);
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
  const std::string_view application = name ? std::string_view(name) : std::string_view("unknown");
  return AppMatch{application, category_of_ndpi(application, c)};
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
