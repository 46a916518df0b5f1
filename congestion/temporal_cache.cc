#include "congestion/temporal_cache.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <vector>

#include "congestion/window_law.h"

namespace egw::congestion {
namespace {

constexpr std::string_view kHeader = "egw-temporal-cache v1";
constexpr std::string_view kTrailer = "end";  // "end <number of records>"
constexpr std::size_t kFieldsPerRecord = 8;
// Sanity bounds for values read back: anything beyond is corruption.
constexpr std::int64_t kMaxDurationUs = 3'600'000'000;  // 1 hour of RTT
constexpr ByteCount kMaxDatagramBytes = 65'535;

Duration retransmission_timeout(const PathState& s) {
  if (s.srtt <= Duration::zero()) return ms(1000);  // RFC 6298 2.1: no sample yet
  return std::max(s.srtt + 4 * s.rttvar, ms(200));  // RFC 6298 2.3, Linux floor
}

bool is_safe_key_byte(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("._~:/@[]-").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string encode_key(std::string_view key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_safe_key_byte(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::string> decode_key(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (is_safe_key_byte(static_cast<unsigned char>(c))) {
      out.push_back(c);
    } else {
      return std::nullopt;
    }
    if (out.size() > TemporalCache::kMaxKeyBytes) return std::nullopt;
  }
  return out;
}

// Whole-field decimal parse: no sign, no spaces, no trailing bytes.
template <typename T>
bool parse_number(std::string_view s, T* out) {
  if (s.empty() || s.front() == '-') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::int64_t unix_us(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<Duration>(t.time_since_epoch()).count();
}

struct Record {
  std::string key;
  PathState state;
};

// One record line; on failure returns the reason.
std::optional<std::string> parse_record(std::string_view line, Instant now,
                                        std::int64_t wall_now_us, Record* out) {
  const auto fields = split(line, ' ');
  if (fields.size() != kFieldsPerRecord) return "expected 8 fields";
  auto key = decode_key(fields[0]);
  if (!key) return "bad key encoding";
  out->key = std::move(*key);
  PathState& s = out->state;
  std::int64_t srtt = 0, rttvar = 0, min_rtt = 0, wall_saved = 0;
  if (!parse_number(fields[1], &s.cwnd_bytes) || !parse_number(fields[2], &s.ssthresh_bytes) ||
      !parse_number(fields[3], &srtt) || !parse_number(fields[4], &rttvar) ||
      !parse_number(fields[5], &min_rtt) || !parse_number(fields[6], &s.max_datagram_bytes) ||
      !parse_number(fields[7], &wall_saved)) {
    return "bad number";
  }
  if (srtt > kMaxDurationUs || rttvar > kMaxDurationUs || min_rtt > kMaxDurationUs) {
    return "rtt out of range";
  }
  if (s.max_datagram_bytes > kMaxDatagramBytes) return "max_datagram_bytes out of range";
  s.srtt = us(srtt);
  s.rttvar = us(rttvar);
  s.min_rtt = us(min_rtt);
  // Monotonic instants do not survive a restart; the wall-clock age does.
  const std::int64_t age_us = std::max<std::int64_t>(wall_now_us - wall_saved, 0);
  s.saved_at = now - us(age_us);
  return std::nullopt;
}

}  // namespace

TemporalCache::TemporalCache(const TemporalCacheConfig& config) : config_(config) {}

void TemporalCache::insert_in_order(Entry entry) {
  // Usually the newest: walk back from the end past entries saved later.
  auto pos = entries_.end();
  while (pos != entries_.begin() && std::prev(pos)->state.saved_at > entry.state.saved_at) --pos;
  auto it = entries_.insert(pos, std::move(entry));
  index_.emplace(it->key, it);
}

void TemporalCache::store(std::string_view key, PathState state, Instant now) {
  if (config_.capacity == 0 || key.size() > kMaxKeyBytes) return;
  erase(key);
  if (entries_.size() >= config_.capacity) {
    index_.erase(entries_.front().key);  // reuse the oldest, as tcp_metrics does
    entries_.pop_front();
  }
  state.saved_at = now;
  insert_in_order(Entry{std::string(key), state});
}

PathState TemporalCache::clamped(PathState s) const {
  s.cwnd_bytes = std::min(s.cwnd_bytes, config_.max_cwnd_bytes);
  if (s.ssthresh_bytes != kInfiniteSsthresh) {
    s.ssthresh_bytes = std::min(s.ssthresh_bytes, config_.max_cwnd_bytes);
  }
  auto rtt = [](Duration d) { return std::clamp(d, Duration::zero(), us(kMaxDurationUs)); };
  s.srtt = rtt(s.srtt);
  s.rttvar = rtt(s.rttvar);
  s.min_rtt = rtt(s.min_rtt);
  return s;
}

void TemporalCache::learn(std::string_view key, const PathObservation& observed, Instant now) {
  if (observed.backed_off) {
    erase(key);
    return;
  }
  const PathState& seen = observed.state;
  auto found = index_.find(key);
  if (found == index_.end() || now - found->second->state.saved_at > config_.lifetime) {
    PathState first = seen;
    if (observed.window_unreliable) first.cwnd_bytes = 0;  // RTT only: no jump
    store(key, clamped(first), now);
    return;
  }
  const PathState old = found->second->state;
  PathState s = seen;
  if (seen.srtt > Duration::zero() && old.srtt > Duration::zero()) {
    // Overestimating the RTT is always safer than underestimating it.
    s.srtt = seen.srtt >= old.srtt ? seen.srtt - (seen.srtt - old.srtt) / 8
                                   : old.srtt - (old.srtt - seen.srtt) / 8;
    s.rttvar = seen.rttvar >= old.rttvar ? seen.rttvar
                                         : old.rttvar - (old.rttvar - seen.rttvar) / 4;
  }
  if (observed.window_unreliable) {
    const ByteCount reference =
        seen.ssthresh_bytes == kInfiniteSsthresh ? old.cwnd_bytes : seen.ssthresh_bytes;
    s.cwnd_bytes = old.cwnd_bytes == 0 ? 0 : (old.cwnd_bytes + reference) / 2;
    s.ssthresh_bytes = old.ssthresh_bytes;
  } else if (observed.in_initial_slow_start) {
    s.cwnd_bytes = std::max(old.cwnd_bytes, seen.cwnd_bytes);
    s.ssthresh_bytes = old.ssthresh_bytes;
    if (old.ssthresh_bytes != 0 && old.ssthresh_bytes != kInfiniteSsthresh &&
        seen.cwnd_bytes / 2 > old.ssthresh_bytes) {
      s.ssthresh_bytes = seen.cwnd_bytes / 2;
    }
  } else {
    s.cwnd_bytes = old.cwnd_bytes == 0 ? seen.cwnd_bytes : (old.cwnd_bytes + seen.cwnd_bytes) / 2;
    const ByteCount old_ssthresh = old.ssthresh_bytes == kInfiniteSsthresh ? 0 : old.ssthresh_bytes;
    s.ssthresh_bytes = std::max(seen.cwnd_bytes / 2, old_ssthresh);
  }
  store(key, clamped(s), now);
}

std::optional<PathState> TemporalCache::lookup(std::string_view key, Instant now) {
  auto found = index_.find(key);
  if (found == index_.end()) return std::nullopt;
  const PathState state = found->second->state;
  if (now - state.saved_at > config_.lifetime) {
    entries_.erase(found->second);
    index_.erase(found);
    return std::nullopt;
  }
  return aged(clamped(state), now);
}

PathState TemporalCache::aged(const PathState& saved, Instant now) const {
  PathState s = saved;
  if (config_.aging == CacheAging::none) return s;
  const Duration idle = std::max(now - s.saved_at, Duration::zero());
  const std::int64_t rtos = idle / retransmission_timeout(s);
  const ByteCount floor_bytes = 2 * s.max_datagram_bytes;
  if (rtos == 0 || s.cwnd_bytes <= floor_bytes) return s;
  s.ssthresh_bytes = std::max(s.ssthresh_bytes, s.cwnd_bytes / 4 * 3);
  for (std::int64_t i = 0; i < rtos && s.cwnd_bytes > floor_bytes; ++i) s.cwnd_bytes /= 2;
  s.cwnd_bytes = std::max(s.cwnd_bytes, floor_bytes);
  return s;
}

void TemporalCache::erase(std::string_view key) {
  auto found = index_.find(key);
  if (found == index_.end()) return;
  entries_.erase(found->second);
  index_.erase(found);
}

std::size_t TemporalCache::size() const { return entries_.size(); }

std::string TemporalCache::serialize(Instant now,
                                     std::chrono::system_clock::time_point wall_now) const {
  const std::int64_t wall_now_us = unix_us(wall_now);
  std::string out(kHeader);
  out.push_back('\n');
  std::size_t written = 0;
  for (const Entry& e : entries_) {
    const Duration age = std::max(now - e.state.saved_at, Duration::zero());
    if (age > config_.lifetime) continue;  // would be dropped at load anyway
    const PathState& s = e.state;
    out += encode_key(e.key);
    // Clamped to what deserialize accepts, so our own output always loads.
    auto dur = [](Duration d) {
      return std::to_string(std::clamp<std::int64_t>(d.count(), 0, kMaxDurationUs));
    };
    for (const std::string& v :
         {std::to_string(s.cwnd_bytes), std::to_string(s.ssthresh_bytes), dur(s.srtt),
          dur(s.rttvar), dur(s.min_rtt),
          std::to_string(std::min(s.max_datagram_bytes, kMaxDatagramBytes))}) {
      out += ' ';
      out += v;
    }
    out += ' ';
    out += std::to_string(wall_now_us - age.count());
    out += '\n';
    ++written;
  }
  out += kTrailer;
  out += ' ';
  out += std::to_string(written);
  out += '\n';
  return out;
}

TemporalCache::LoadResult TemporalCache::deserialize(
    std::string_view text, Instant now, std::chrono::system_clock::time_point wall_now) {
  entries_.clear();
  index_.clear();
  auto fail = [](std::size_t line, std::string_view why) {
    LoadResult r;
    r.error = "line " + std::to_string(line) + ": " + std::string(why);
    return r;
  };

  // A complete text ends with '\n': the part after the last one is empty, and
  // every earlier part is a whole line.
  const auto lines = split(text, '\n');
  if (lines.front() != kHeader) return fail(1, "not an egw-temporal-cache v1 header");

  const std::int64_t wall_now_us = unix_us(wall_now);
  std::vector<Record> records;
  std::set<std::string, std::less<>> seen;  // keys read so far
  std::size_t records_read = 0;
  std::size_t i = 1;
  std::optional<std::size_t> declared;
  for (; i + 1 < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t line_number = i + 1;
    // "end <n>" has two fields, a record eight: a key spelled "end" is no trailer.
    if (const auto fields = split(line, ' ');
        fields.size() == 2 && fields[0] == kTrailer) {
      std::size_t n = 0;
      if (!parse_number(fields[1], &n)) return fail(line_number, "bad trailer");
      if (n != records_read) return fail(line_number, "record count mismatch");
      declared = n;
      break;
    }
    Record r;
    if (auto why = parse_record(line, now, wall_now_us, &r)) return fail(line_number, *why);
    if (!seen.insert(r.key).second) return fail(line_number, "duplicate key");
    ++records_read;
    if (now - r.state.saved_at > config_.lifetime) continue;  // stale: not loaded
    r.state = clamped(r.state);  // a file is input: bound what it may claim
    records.push_back(std::move(r));
  }
  if (!declared) return fail(i + 1, "truncated: no end trailer");
  if (i + 2 != lines.size() || !lines.back().empty()) return fail(i + 2, "data after the end trailer");

  // Keep the newest `capacity` records.
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return a.state.saved_at < b.state.saved_at;
  });
  const std::size_t skip = records.size() > config_.capacity ? records.size() - config_.capacity : 0;
  LoadResult result;
  for (std::size_t i = skip; i < records.size(); ++i) {
    insert_in_order(Entry{std::move(records[i].key), records[i].state});
    ++result.loaded;
  }
  return result;
}

}  // namespace egw::congestion
