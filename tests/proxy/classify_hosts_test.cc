// The classification corpus (tests/data/classify/hosts.tsv): 254 real host
// names of applications, each with the category an admin would expect,
// chosen by hand and not from nDPI. The host-name stages (the newer nDPI
// list, the v2fly list, the UT1 list, libndpi 4.2, our general mapping
// tables, name tokens, unknown_host) must give the expected category for a
// floor of them (Floors below), and for the floors of three holdouts
// (holdout.tsv, holdout2.tsv, holdout3.tsv: names in none of the others,
// written before any run; the second before the v2fly list was imported, the
// third before the UT1 list was) so that nothing here is fitted to the
// corpus. Each prints libndpi 4.2 alone and the chain without the v2fly and
// without the UT1 list beside it, and the misses.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "config/net_prefix.h"
#include "proxy/app_list.h"
#include "proxy/classifier.h"
#include "proxy/ndpi_detector.h"

namespace egw::proxy {
namespace {

struct Host {
  std::string name;
  ContentClass expected;
  std::string application;
};

std::vector<Host> read_hosts(const std::string& file) {
  std::ifstream in(std::string(EGW_CLASSIFY_DATA_DIR) + "/" + file);
  std::vector<Host> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, category, application;
    std::getline(fields, name, '\t');
    std::getline(fields, category, '\t');
    std::getline(fields, application, '\t');
    const auto c = content_class_from_string(category);
    if (!c) ADD_FAILURE() << "unknown category in " << file << ": " << line;
    out.push_back({name, c.value_or(ContentClass::bulk), application});
  }
  return out;
}
std::vector<Host> corpus() { return read_hosts("hosts.tsv"); }

// How many of `hosts` the host-name stages give the expected category;
// prints the share and the misses under `title`.
std::size_t score(const Classifier& k, const std::vector<Host>& hosts, const char* title) {
  std::size_t right = 0;
  std::string misses;
  for (const Host& h : hosts) {
    const auto d = k.class_of_sni(h.name);
    const ContentClass got = d ? d->cls : ContentClass::web;  // unknown_host
    if (got == h.expected) {
      ++right;
    } else {
      const std::string as = d && !d->application.empty() ? " as " + std::string(d->application) : "";
      misses += "  " + h.name + " (" + h.application + "): expected " + std::string(to_string(h.expected)) + ", got " +
                std::string(to_string(got)) + as + "\n";
    }
  }
  std::printf("%s: %zu of %zu (%.1f %%) as expected; misses:\n%s", title, right, hosts.size(),
              100.0 * static_cast<double>(right) / static_cast<double>(hosts.size()), misses.c_str());
  return right;
}

// The figures of one data set: libndpi 4.2 alone, the newer nDPI list then
// libndpi 4.2 (main before the v2fly list), the chain without the UT1 list
// (main before it), and the whole chain.
struct Floors {
  std::size_t ndpi42, without_v2fly, without_ut1, chain;
};

void expect_floors(const char* file, const char* title, std::size_t at_least, Floors floors) {
  const auto hosts = read_hosts(file);
  ASSERT_GE(hosts.size(), at_least);
  const AppListDetector without_v2fly(ndpi_host_table(), &NdpiDetector::shared());
  const AppListDetector v2fly_then_ndpi42(v2fly_host_table(), &NdpiDetector::shared());
  const AppListDetector without_ut1(ndpi_host_table(), &v2fly_then_ndpi42);
  const Classifier ndpi42{config::ClassifyConfig{}, &NdpiDetector::shared()};
  const Classifier before_v2fly{config::ClassifyConfig{}, &without_v2fly};
  const Classifier before_ut1{config::ClassifyConfig{}, &without_ut1};
  const Classifier k{config::ClassifyConfig{}};  // the newer nDPI list, the v2fly list, the UT1 list, libndpi 4.2
  const std::string t = title;
  EXPECT_GE(score(ndpi42, hosts, (t + ", libndpi 4.2 alone").c_str()), floors.ndpi42);
  EXPECT_GE(score(before_v2fly, hosts, (t + ", newer nDPI list then libndpi 4.2").c_str()), floors.without_v2fly);
  EXPECT_GE(score(before_ut1, hosts, (t + ", newer nDPI list, v2fly list, libndpi 4.2").c_str()), floors.without_ut1);
  EXPECT_GE(score(k, hosts, (t + ", newer nDPI list, v2fly list, UT1 list, libndpi 4.2").c_str()), floors.chain);
}

// Issue 21's goal is 95 % of the corpus. main with libndpi 4.2 alone gave 202
// of 254 (79.5 %); the newer nDPI list first (upstream 3b1286a, Oct 2024)
// gave 213 (83.9 %); the v2fly list after it (c975cce, Aug 2026) 224
// (88.2 %); the UT1 list after that (804da92, Aug 2026) 228 (89.8 %, box.com
// and wetransfer.com); the most specific name across the lists answering
// (swcdn.apple.com: v2fly's apple-update, not the newer nDPI list's Apple)
// 226 and 230 (90.6 %): the floors, so a change that loses any of it fails.
// What is left is in no list (zoomgov.com, wbx2.com, whereby.com,
// backblaze, ...), under an umbrella no list splits (facetime.apple.com), or
// a judgement call (Signal and Viber are chat in nDPI).
TEST(ClassifyHosts, HostNamesGiveTheExpectedCategory) {
  expect_floors("hosts.tsv", "classification corpus", 250, {203, 213, 226, 230});
}

// Names not in the corpus (holdout.tsv, categories chosen by hand before any
// run): the lists must help there too, or they were fitted to the corpus.
// libndpi 4.2 alone: 28 of 71; the newer nDPI list: 33 (46.5 %); with the
// v2fly list: 44 (62.0 %); with the UT1 list: 50 (70.4 %); the most specific
// name across the lists: 45 and 52 (73.2 %; no longer blind to that rule:
// it was first seen in these misses).
TEST(ClassifyHosts, HoldoutNamesGiveTheExpectedCategory) {
  expect_floors("holdout.tsv", "holdout", 50, {28, 33, 45, 52});
}

// 153 more names (holdout2.tsv), committed before the v2fly list was
// imported or its mapping written: what the v2fly stage gives on services
// nobody looked at when choosing it. libndpi 4.2 alone: 42 of 153; the
// newer nDPI list: 52 (34.0 %); with the v2fly list: 86 (56.2 %); with the
// UT1 list: 98 (64.1 %); the most specific name across the lists: 91 and
// 105 (68.6 %).
TEST(ClassifyHosts, SecondHoldoutNamesGiveTheExpectedCategory) {
  expect_floors("holdout2.tsv", "holdout2", 150, {42, 52, 91, 105});
}

// 219 more names (holdout3.tsv, 70 of them plain web sites), committed before
// the UT1 list was imported or its mapping written. libndpi 4.2 alone: 83 of
// 219; the newer nDPI list: 84 (38.4 %); with the v2fly list: 96 (43.8 %);
// with the UT1 list: 121 (55.3 %), and none of the web sites leaves web; the
// most specific name across the lists: 98 and 123 (56.2 %).
TEST(ClassifyHosts, ThirdHoldoutNamesGiveTheExpectedCategory) {
  expect_floors("holdout3.tsv", "holdout3", 200, {83, 84, 98, 123});
}

TEST(ClassifyHosts, ListMatchesAtLabelBoundariesLongestFirst) {
  const AppListDetector list(ndpi_host_table(), nullptr);
  EXPECT_GT(list.patterns(), 900u);
  ASSERT_TRUE(list.by_host("zoom.us").has_value());
  EXPECT_EQ(list.by_host("zoom.us")->application, "Zoom");
  EXPECT_EQ(list.by_host("us06web.zoom.us")->category, ContentClass::realtime);  // Video, but Zoom's row says realtime
  EXPECT_FALSE(list.by_host("notzoom.us").has_value());                          // not at a label boundary
  EXPECT_FALSE(list.by_host("zoom.us.example.net").has_value());
  ASSERT_TRUE(list.by_host("www.amazon.de").has_value());                        // "amazon.": a label prefix
  EXPECT_EQ(list.by_host("www.amazon.de")->application, "Amazon");
  EXPECT_EQ(list.by_host("atv-ps.amazon.com")->application, "AmazonVideo");      // longer suffix first
  EXPECT_FALSE(list.by_host("").has_value());
  EXPECT_FALSE(list.by_host(".").has_value());
}

// The import (scripts/import-ndpi-hosts) reads nDPI's tables as C does: an
// entry commented out upstream is not an entry, and one with a comment inside
// it still is. The earlier generator took the commented-out ".googlezip.net"
// (Google, names under it only: googlezip.net itself matched nothing) and
// dropped "dnsbl." (a comment between its fields).
TEST(ClassifyHosts, TheListHoldsUpstreamsLiveEntriesOnly) {
  const AppListDetector list(ndpi_host_table(), nullptr);
  ASSERT_TRUE(list.by_host("googlezip.net").has_value());
  EXPECT_EQ(list.by_host("googlezip.net")->application, "DataSaver");
  EXPECT_EQ(list.by_host("check.googlezip.net")->application, "DataSaver");
  ASSERT_TRUE(list.by_host("www.dnsbl.info").has_value());
  EXPECT_EQ(list.by_host("www.dnsbl.info")->application, "Cybersec");
}

// A stand-in for libndpi 4.2 behind the list: what it knows, by name and address.
class OlderDetector final : public AppDetector {
 public:
  std::optional<AppMatch> by_host(std::string_view host) const override {
    if (host == "zoom.us") return AppMatch{"OldZoom", ContentClass::bulk};
    if (host == "only-older.example") return AppMatch{"OlderOnly", ContentClass::interactive};
    return std::nullopt;
  }
  std::optional<AppMatch> by_address(const tunnel::Destination&) const override {
    return AppMatch{"ByAddress", ContentClass::streaming};
  }
};

TEST(ClassifyHosts, TheListAnswersFirstAndUnknownNamesFallThrough) {
  const OlderDetector older;
  const AppListDetector chain(ndpi_host_table(), &older);
  EXPECT_EQ(chain.by_host("zoom.us")->application, "Zoom");  // both know it: the newer data wins
  EXPECT_EQ(chain.by_host("zoom.us")->category, ContentClass::realtime);
  ASSERT_TRUE(chain.by_host("only-older.example").has_value());  // the list lacks it: the older engine's
  EXPECT_EQ(chain.by_host("only-older.example")->application, "OlderOnly");
  EXPECT_FALSE(chain.by_host("nobody.example").has_value());  // neither: the classifier's later stages
  EXPECT_EQ(chain.by_address(tunnel::Destination{})->application, "ByAddress");  // addresses: the older engine
  EXPECT_FALSE(AppListDetector(ndpi_host_table(), nullptr).by_host("only-older.example").has_value());
}

// The pattern forms of a HostTable: "x" the name and names under it, ".x"
// names under it only, "=x" that name only (v2fly's full: rules).
TEST(ClassifyHosts, PatternFormsNameWhatTheySay) {
  constexpr HostGroup groups[] = {{"Forms", "bulk", "=one.example all.example .under.example"},
                                  {"Other", "web", "example"}};
  const HostTable table{"test", groups, [](std::string_view, std::string_view c) {
                          return content_class_from_string(c).value();
                        }};
  const AppListDetector list(table, nullptr);
  EXPECT_EQ(list.patterns(), 4u);
  EXPECT_EQ(list.by_host("one.example")->application, "Forms");
  EXPECT_EQ(list.by_host("one.example")->category, ContentClass::bulk);
  EXPECT_EQ(list.by_host("x.one.example")->application, "Other");  // "=one.example" is not names under it
  EXPECT_EQ(list.by_host("all.example")->application, "Forms");
  EXPECT_EQ(list.by_host("a.b.all.example")->application, "Forms");
  EXPECT_EQ(list.by_host("under.example")->application, "Other");  // ".under.example": not itself
  EXPECT_EQ(list.by_host("x.under.example")->application, "Forms");
  EXPECT_FALSE(list.by_host("one.example.net").has_value());
}

// The v2fly list (app_list_v2fly_data.inc): a host takes the category of the
// service list that writes it (proxy/app_list_v2fly_services.tsv); umbrellas
// are not in it; a full: rule names that host only.
TEST(ClassifyHosts, TheV2flyListAnswersByService) {
  const AppListDetector v2fly(v2fly_host_table(), nullptr);
  EXPECT_GT(v2fly.patterns(), 2500u);
  ASSERT_TRUE(v2fly.by_host("zoom.com").has_value());
  EXPECT_EQ(v2fly.by_host("zoom.com")->application, "zoom");
  EXPECT_EQ(v2fly.by_host("zoom.com")->category, ContentClass::realtime);
  EXPECT_EQ(v2fly.by_host("relay.net.anydesk.com")->application, "category-remote-control");
  EXPECT_EQ(v2fly.by_host("relay.net.anydesk.com")->category, ContentClass::interactive);
  EXPECT_EQ(v2fly.by_host("teamviewer.com")->application, "teamviewer");  // written there, included by the aggregate
  EXPECT_EQ(v2fly.by_host("files.pythonhosted.org")->category, ContentClass::bulk);
  EXPECT_EQ(v2fly.by_host("hls-amt.itunes.apple.com")->application, "apple-tvplus");  // full:
  EXPECT_EQ(v2fly.by_host("hls-amt.itunes.apple.com")->category, ContentClass::streaming);
  EXPECT_FALSE(v2fly.by_host("x.hls-amt.itunes.apple.com").has_value());
  EXPECT_FALSE(v2fly.by_host("itunes.apple.com").has_value());  // apple: an umbrella, left out
  EXPECT_FALSE(v2fly.by_host("www.google.com").has_value());
  EXPECT_FALSE(v2fly.by_host("ads.zoom.us.example").has_value());
}

// The process's chain: the newer nDPI list, the v2fly list, the UT1 list, libndpi 4.2.
TEST(ClassifyHosts, TheV2flyListComesBetweenTheNdpiLists) {
  const OlderDetector older;
  const AppListDetector v2fly(v2fly_host_table(), &older);
  const AppListDetector chain(ndpi_host_table(), &v2fly);
  EXPECT_EQ(chain.by_host("zoom.us")->application, "Zoom");  // the newer nDPI list first
  EXPECT_EQ(chain.by_host("zoom.com")->application, "zoom");  // it lacks zoom.com: the v2fly list's
  EXPECT_EQ(chain.by_host("only-older.example")->application, "OlderOnly");  // then the older engine
  EXPECT_EQ(AppListDetector::shared().by_host("zoom.us")->application, "Zoom");
  EXPECT_EQ(AppListDetector::shared().by_host("zoom.com")->application, "zoom");
  EXPECT_EQ(&AppListDetector::shared_v2fly(), &AppListDetector::shared_v2fly());
  EXPECT_EQ(AppListDetector::shared_v2fly().name(), "v2fly list");
}

// Across the lists the most specific name answers, as within one: a service
// a later list names under an earlier list's umbrella is that service; on a
// tie the earlier list's answer stands; a label prefix ("skype.") counts from
// where it matched, so it ties with a later list's "skype.com".
TEST(ClassifyHosts, TheMostSpecificNameAcrossTheListsAnswers) {
  constexpr HostGroup first_groups[] = {{"Umbrella", "web", "vendor.example skype."},
                                        {"Tied", "realtime", "tied.example"}};
  constexpr HostGroup later_groups[] = {{"Updates", "bulk", "dl.vendor.example"},
                                        {"Chat", "interactive", "skype.com tied.example"}};
  const auto ours = [](std::string_view, std::string_view c) { return content_class_from_string(c).value(); };
  const HostTable first_table{"first", first_groups, ours};
  const HostTable later_table{"later", later_groups, ours};
  const OlderDetector older;
  const AppListDetector later(later_table, &older);
  const AppListDetector chain(first_table, &later);
  EXPECT_EQ(chain.by_host("www.vendor.example")->application, "Umbrella");
  EXPECT_EQ(chain.by_host("x.dl.vendor.example")->application, "Updates");  // longer than vendor.example
  EXPECT_EQ(chain.by_host("x.dl.vendor.example")->category, ContentClass::bulk);
  EXPECT_EQ(chain.by_host("www.tied.example")->application, "Tied");  // the same name: the first list's
  EXPECT_EQ(chain.by_host("web.skype.com")->application, "Umbrella");  // "skype." from "skype.com" on: a tie
  EXPECT_EQ(chain.by_host("only-older.example")->application, "OlderOnly");  // no list: the engine after them
  EXPECT_EQ(AppListDetector::shared().by_host("swcdn.apple.com")->category, ContentClass::bulk);  // v2fly's apple-update
  EXPECT_EQ(AppListDetector::shared().by_host("www.apple.com")->category, ContentClass::web);
}

// The UT1 list names sites, not applications: a name's application is the
// list's name that matched. It answers after the v2fly list (webex.de is
// v2fly's Webex, a call, where UT1 files it under remote control) and
// before libndpi 4.2.
TEST(ClassifyHosts, TheUt1ListNamesEachSiteAndAnswersAfterV2fly) {
  const AppListDetector ut1(ut1_host_table(), nullptr);
  const auto radio = ut1.by_host("www.tunein.com");
  ASSERT_TRUE(radio.has_value());
  EXPECT_EQ(radio->application, "tunein.com");
  EXPECT_EQ(radio->category, ContentClass::streaming);
  EXPECT_EQ(ut1.by_host("rapidgator.net")->category, ContentClass::bulk);
  EXPECT_EQ(ut1.by_host("www.supremocontrol.com")->category, ContentClass::interactive);
  EXPECT_FALSE(ut1.by_host("1.1.1.1").has_value());  // its resolvers' addresses are not names
  EXPECT_EQ(ut1.by_host("webex.de")->category, ContentClass::interactive);
  EXPECT_EQ(AppListDetector::shared().by_host("webex.de")->category, ContentClass::realtime);
  EXPECT_EQ(AppListDetector::shared().by_host("www.rapidgator.net")->application, "rapidgator.net");
  const OlderDetector older;
  const AppListDetector ut1_then_older(ut1_host_table(), &older);
  EXPECT_EQ(ut1_then_older.by_host("only-older.example")->application, "OlderOnly");
  EXPECT_EQ(&AppListDetector::shared_ut1(), &AppListDetector::shared_ut1());
  EXPECT_EQ(AppListDetector::shared_ut1().name(), "UT1 list");
}

TEST(ClassifyHosts, AdminRulesComeBeforeTheList) {
  const AppListDetector list(ndpi_host_table(), nullptr);
  config::ClassifyConfig c;
  c.sni = {{"*.zoom.us", ContentClass::bulk}};
  c.destinations = {{std::get<config::DestinationRule>(config::parse_destination_rule("198.51.100.9/32")),
                     ContentClass::interactive}};
  const Classifier k{c, &list};
  const auto rule = k.class_of_sni("us02web.zoom.us");  // the admin's pattern, though the list knows Zoom
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->cls, ContentClass::bulk);
  EXPECT_EQ(rule->stage, Stage::sni_rule);
  const auto listed = k.class_of_sni("zoom.us");  // "*.zoom.us" is not zoom.us itself
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->cls, ContentClass::realtime);
  EXPECT_EQ(listed->stage, Stage::sni_detector);
  EXPECT_EQ(listed->application, "Zoom");
  tunnel::Destination d;
  d.address[0] = 198; d.address[1] = 51; d.address[2] = 100; d.address[3] = 9;
  d.port = 443;
  const auto final_rule = k.classify_named(d, std::string_view("zoom.us"));  // a destination rule first of all
  EXPECT_EQ(final_rule.stage, Stage::destination_rule);
  EXPECT_EQ(final_rule.cls, ContentClass::interactive);
  d.address[3] = 10;
  const auto unknown = k.classify_named(d, std::string_view("nobody.example"));  // nothing knew it
  EXPECT_EQ(unknown.stage, Stage::unknown_host);
  EXPECT_EQ(unknown.cls, ContentClass::web);
}

// A detector that knows every name as a company's site (web).
class EverythingIsWeb final : public AppDetector {
 public:
  std::optional<AppMatch> by_host(std::string_view) const override { return AppMatch{"Umbrella", ContentClass::web}; }
  std::optional<AppMatch> by_address(const tunnel::Destination&) const override { return std::nullopt; }
};

TEST(ClassifyHosts, NameTokensRefineTheDetectorsWebAnswer) {
  const EverythingIsWeb web;
  const Classifier k{config::ClassifyConfig{}, &web};
  const auto download = k.class_of_sni("download.example.com");
  ASSERT_TRUE(download.has_value());
  EXPECT_EQ(download->cls, ContentClass::bulk);
  EXPECT_EQ(download->stage, Stage::sni_tokens);
  EXPECT_EQ(download->application, "Umbrella");
  const auto www = k.class_of_sni("www.example.com");
  ASSERT_TRUE(www.has_value());
  EXPECT_EQ(www->cls, ContentClass::web);
  EXPECT_EQ(www->stage, Stage::sni_detector);
}

TEST(ClassifyHosts, NdpiIsBuiltOnceAndEachNameCostsMicroseconds) {
  const NdpiDetector& ndpi = NdpiDetector::shared();
  EXPECT_EQ(&ndpi, &NdpiDetector::shared());
  std::printf("nDPI detection module built in %.1f ms\n", ndpi.init_ms());
  const auto hosts = corpus();
  const auto start = std::chrono::steady_clock::now();
  std::size_t found = 0;
  for (int round = 0; round < 10; ++round) {
    for (const Host& h : hosts) found += ndpi.by_host(h.name).has_value();
  }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                    static_cast<double>(10 * hosts.size());
  std::printf("nDPI by host: %.2f us per name (%zu found)\n", us, found / 10);
  EXPECT_LT(us, 200.0);  // a loose bound (sanitizers, a loaded CI machine); the benchmark has the figure
}

}  // namespace
}  // namespace egw::proxy
