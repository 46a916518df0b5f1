// What a stream carries, as far as scheduling cares. Learned from the first
// bytes of a response (proxy/) or from a class hint on the wire (tunnel/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace egw {

enum class ContentClass : std::uint8_t {
  html = 0,    // documents: drive page rendering, so they go first
  script = 1,  // E-TCP's "Java": code the page needs to run
  image = 2,
  bulk = 3,    // E-TCP's "FTP": everything else, and the default
};
inline constexpr int kContentClassCount = 4;

constexpr std::string_view to_string(ContentClass c) {
  switch (c) {
    case ContentClass::html: return "html";
    case ContentClass::script: return "script";
    case ContentClass::image: return "image";
    case ContentClass::bulk: return "bulk";
  }
  return "bulk";
}

constexpr std::optional<ContentClass> content_class_from_string(std::string_view s) {
  if (s == "html") return ContentClass::html;
  if (s == "script") return ContentClass::script;
  if (s == "image") return ContentClass::image;
  if (s == "bulk") return ContentClass::bulk;
  return std::nullopt;
}

constexpr std::optional<ContentClass> content_class_from_wire(std::uint8_t v) {
  if (v < kContentClassCount) return static_cast<ContentClass>(v);
  return std::nullopt;
}

}  // namespace egw
