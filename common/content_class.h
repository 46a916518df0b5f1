// What a stream carries, as far as scheduling cares: a content type (E-TCP's
// web: learned from a cleartext response's Content-Type) or an application
// category (learned from the destination, the TLS SNI or nDPI; proxy/). Also
// a class hint on the wire (tunnel/).
//
// Wire values: 0-3 are the content types every build knows; 4-7 the
// categories (issue 21). A receiver maps a value it does not know to bulk
// (content_class_from_wire_or_bulk); an older build fails the frame instead,
// so a sender whose peer has not said it knows the categories sends the
// nearest old class (nearest_content_type).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace egw {

enum class ContentClass : std::uint8_t {
  html = 0,    // documents: drive page rendering, so they go first
  script = 1,  // E-TCP's "Java": code the page needs to run
  image = 2,
  bulk = 3,    // E-TCP's "FTP": updates, backups, file sync; the default
  realtime = 4,     // calls, conferencing, VoIP: strict precedence under a cap
  interactive = 5,  // SSH, RDP, chat, DNS, small request/response
  web = 6,          // HTTPS whose content type is invisible (HTTP/2, TLS)
  streaming = 7,    // video and music streaming
};
inline constexpr int kContentClassCount = 8;
// Classes an older build knows (wire values below this).
inline constexpr int kContentTypeClassCount = 4;

constexpr std::string_view to_string(ContentClass c) {
  switch (c) {
    case ContentClass::html: return "html";
    case ContentClass::script: return "script";
    case ContentClass::image: return "image";
    case ContentClass::bulk: return "bulk";
    case ContentClass::realtime: return "realtime";
    case ContentClass::interactive: return "interactive";
    case ContentClass::web: return "web";
    case ContentClass::streaming: return "streaming";
  }
  return "bulk";
}

// Every class name, in wire order; for messages.
inline constexpr std::string_view kContentClassNames =
    "html, script, image, bulk, realtime, interactive, web, streaming";

constexpr std::optional<ContentClass> content_class_from_string(std::string_view s) {
  for (int v = 0; v < kContentClassCount; ++v) {
    if (s == to_string(static_cast<ContentClass>(v))) return static_cast<ContentClass>(v);
  }
  return std::nullopt;
}

constexpr std::optional<ContentClass> content_class_from_wire(std::uint8_t v) {
  if (v < kContentClassCount) return static_cast<ContentClass>(v);
  return std::nullopt;
}

// A newer peer's class this build does not know yet is scheduled as bulk
// rather than failing the frame (and with it the whole packet).
constexpr ContentClass content_class_from_wire_or_bulk(std::uint8_t v) {
  return content_class_from_wire(v).value_or(ContentClass::bulk);
}

// The class an older peer (content types only) schedules most like `c`:
// realtime and interactive go first there too (html has the most tickets),
// web is html's equal, streaming sits with images.
constexpr ContentClass nearest_content_type(ContentClass c) {
  switch (c) {
    case ContentClass::realtime:
    case ContentClass::interactive:
    case ContentClass::web: return ContentClass::html;
    case ContentClass::streaming: return ContentClass::image;
    default: return c;
  }
}

}  // namespace egw
