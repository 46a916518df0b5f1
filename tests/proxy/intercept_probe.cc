// The interception pieces alone, driven by netns_intercept_test.sh:
//
//   intercept_probe print|json|install|serve RULES   RULES: --table T --lan P,P
//       --ports 80,8080|* --redirect PORT [--bypass P,P] [--reject-quic]
//   intercept_probe remove|exists --table T          (exists: exit 0 if present)
//
// serve installs the table, listens on [::]:PORT (dual stack) and, per
// accepted connection, prints one line and answers "probe\n":
//   original 10.1.2.3:80 | self [fd00::1]:15001 (refused, not answered) | error TEXT
// On SIGTERM it removes the table and exits 0; killed with SIGKILL it leaves
// the table behind, as a crashed gateway would.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "proxy/nft_table.h"
#include "proxy/original_destination.h"

namespace {

using egw::proxy::InterceptionRules;
using egw::proxy::NftTable;

volatile std::sig_atomic_t stop = 0;

[[noreturn]] void fail(const std::string& why, int code = 1) {
  std::fprintf(stderr, "intercept_probe: %s\n", why.c_str());
  std::exit(code);
}
[[noreturn]] void usage(const std::string& why) { fail(why, 2); }

std::vector<egw::config::IpPrefix> parse_prefixes(std::string_view text) {
  std::vector<egw::config::IpPrefix> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto parsed = egw::config::parse_ip_prefix(text.substr(0, comma));
    if (const auto* error = std::get_if<std::string>(&parsed)) usage(*error);
    out.push_back(std::get<egw::config::IpPrefix>(parsed));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return out;
}

InterceptionRules parse_rules(int argc, char** argv) {
  InterceptionRules r;
  for (int i = 2; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--reject-quic") {
      r.reject_quic = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + std::string(flag));
    const std::string_view value = argv[++i];
    if (flag == "--table") {
      r.table = value;
    } else if (flag == "--lan") {
      r.lan = parse_prefixes(value);
    } else if (flag == "--bypass") {
      r.bypass = parse_prefixes(value);
    } else if (flag == "--ports") {
      const auto parsed = egw::config::parse_ports(value);
      if (const auto* error = std::get_if<std::string>(&parsed)) usage(*error);
      r.ports = std::get<egw::config::PortRanges>(parsed);
    } else if (flag == "--redirect") {
      r.redirect_port = static_cast<std::uint16_t>(std::stoi(std::string(value)));
    } else {
      usage("unknown flag " + std::string(flag));
    }
  }
  return r;
}

int listen_dual_stack(std::uint16_t port) {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  const int off = 0, on = 1;
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_any;
  a.sin6_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0) {
    std::perror("intercept_probe: listen");
    std::exit(1);
  }
  return fd;
}

void answer(int client, int listener) {
  std::string error;
  const auto original = egw::proxy::original_destination(client, &error);
  if (!original) {
    std::printf("error %s\n", error.c_str());
  } else if (egw::proxy::is_listener_itself(*original, listener)) {
    std::printf("self %s\n", egw::proxy::format_destination(*original).c_str());
  } else {
    std::printf("original %s\n", egw::proxy::format_destination(*original).c_str());
    const char reply[] = "probe\n";
    if (write(client, reply, sizeof reply - 1) < 0) std::perror("intercept_probe: write");
  }
  std::fflush(stdout);
}

int serve(const InterceptionRules& rules) {
  const int listener = listen_dual_stack(rules.redirect_port);
  if (const auto error = NftTable::install(rules)) fail(*error);
  struct sigaction action {};
  action.sa_handler = [](int) { stop = 1; };
  sigaction(SIGTERM, &action, nullptr);  // no SA_RESTART: accept() returns EINTR
  sigaction(SIGINT, &action, nullptr);
  std::printf("serving\n");
  std::fflush(stdout);
  while (!stop) {
    const int client = accept(listener, nullptr, nullptr);
    if (client < 0) continue;
    answer(client, listener);
    close(client);
  }
  if (const auto error = NftTable::remove(rules.table)) fail(*error);
  std::printf("removed\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("usage: intercept_probe print|json|install|serve|remove|exists [flags]");
  const std::string_view command = argv[1];
  const InterceptionRules rules = parse_rules(argc, argv);
  if (command == "print" || command == "json") {
    if (const auto error = egw::proxy::check_rules(rules)) usage(*error);
    std::fputs((command == "print" ? egw::proxy::render_nft_script(rules) : egw::proxy::render_nft_json(rules)).c_str(),
               stdout);
    return 0;
  }
  if (command == "install") {
    if (const auto error = NftTable::install(rules)) fail(*error);
    return 0;
  }
  if (command == "serve") return serve(rules);
  if (command == "remove") {
    if (const auto error = NftTable::remove(rules.table)) fail(*error);
    return 0;
  }
  if (command == "exists") return NftTable::exists(rules.table) ? 0 : 1;
  usage("unknown command " + std::string(command));
}
