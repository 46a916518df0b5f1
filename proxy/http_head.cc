#include "proxy/http_head.h"

#include <algorithm>
#include <string_view>

namespace egw::proxy {
namespace {

using std::string_view;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }

// RFC 9110 5.6.2 tchar.
bool is_token(string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           string_view("!#$%&'*+-.^_`|~").find(c) != string_view::npos;
  });
}

bool iequals(string_view a, string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

string_view trim(string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// The media type of a Content-Type value: of its comma-separated parts the
// last that parses, as browsers do (Fetch, "extract a MIME type").
std::optional<std::string> media_type_of(string_view value) {
  std::optional<std::string> last;
  while (true) {
    const auto comma = value.find(',');
    const string_view part = value.substr(0, comma);
    const string_view essence = trim(part.substr(0, part.find(';')));
    const auto slash = essence.find('/');
    if (slash != string_view::npos && is_token(essence.substr(0, slash)) && is_token(essence.substr(slash + 1))) {
      last.emplace(essence);
      for (char& c : *last) c = lower(c);
    }
    if (comma == string_view::npos) return last;
    value.remove_prefix(comma + 1);
  }
}

// "HTTP/1.x NNN" followed by a space or the end of the line, checked byte by
// byte as far as `in` goes: false as soon as one is wrong.
constexpr std::size_t kStatusPrefix = 13;
bool status_line_so_far_ok(string_view in) {
  constexpr string_view kVersion = "HTTP/1.";
  for (std::size_t i = 0; i < std::min(in.size(), kStatusPrefix); ++i) {
    const char c = in[i];
    const bool ok = i < 7 ? c == kVersion[i]
                  : i == 7 || (i >= 9 && i <= 11) ? is_digit(c)
                  : i == 8 ? c == ' '
                  : c == ' ' || c == '\r' || c == '\n';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

HttpResponseHead scan_http_response_head(std::span<const std::byte> first_bytes) {
  const string_view all(reinterpret_cast<const char*>(first_bytes.data()),
                        std::min(first_bytes.size(), kHttpHeadScanBytes));
  // Out of bytes: more would help, unless the cap is reached.
  const HttpResponseHead more{.status = first_bytes.size() >= kHttpHeadScanBytes ? HttpHeadStatus::not_http
                                                                               : HttpHeadStatus::need_more};
  std::size_t head = 0;  // where the current response head starts (after any 1xx)
  while (true) {
    const string_view in = all.substr(head);
    if (!status_line_so_far_ok(in)) return {.status = HttpHeadStatus::not_http};
    if (in.size() < kStatusPrefix) return more;
    const int code = (in[9] - '0') * 100 + (in[10] - '0') * 10 + (in[11] - '0');
    auto line_end = in.find('\n', kStatusPrefix - 1);
    if (line_end == string_view::npos) return more;

    // Field lines up to the empty one. CRLF or a bare LF ends a line
    // (RFC 9112 2.2); a line starting with whitespace continues the previous
    // field (obsolete folding); whitespace before the colon is tolerated.
    std::optional<std::string> content_type;  // the last Content-Type field's value
    bool folding_content_type = false;
    std::size_t p = line_end + 1;
    while (true) {
      line_end = in.find('\n', p);
      if (line_end == string_view::npos) return more;
      string_view line = in.substr(p, line_end - p);
      p = line_end + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) break;
      if (is_ows(line.front())) {
        if (folding_content_type) *content_type += " " + std::string(trim(line));
        continue;
      }
      const auto colon = line.find(':');
      folding_content_type = colon != string_view::npos && iequals(trim(line.substr(0, colon)), "content-type");
      if (folding_content_type) content_type.emplace(trim(line.substr(colon + 1)));
    }
    if (code / 100 == 1 && code != 101) {  // interim: the final head follows
      head += p;
      continue;
    }
    HttpResponseHead result{.status = HttpHeadStatus::complete, .status_code = code};
    if (content_type) result.content_type = media_type_of(*content_type);
    return result;
  }
}

HttpRequestSniff sniff_http_request(std::span<const std::byte> first_bytes) {
  constexpr std::size_t kMaxMethod = 20;  // "VERSION-CONTROL" is 15
  for (std::size_t i = 0; i < first_bytes.size(); ++i) {
    const char c = static_cast<char>(first_bytes[i]);
    if (c == ' ') {
      if (i == 0) return HttpRequestSniff::no;
      if (i + 1 == first_bytes.size()) return HttpRequestSniff::need_more;
      // origin-form "/", asterisk-form "*", absolute-form "http:", authority-form "host:443"
      const char t = lower(static_cast<char>(first_bytes[i + 1]));
      return t == '/' || t == '*' || (t >= 'a' && t <= 'z') || is_digit(t) || t == '['
                 ? HttpRequestSniff::yes
                 : HttpRequestSniff::no;
    }
    if (i >= kMaxMethod || !((c >= 'A' && c <= 'Z') || c == '-' || c == '_')) return HttpRequestSniff::no;
  }
  return HttpRequestSniff::need_more;
}

}  // namespace egw::proxy
