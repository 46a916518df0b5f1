// Original destinations without any NAT: a client connecting to the listener
// itself must be recognised (the redirect case needs root and namespaces:
// netns_intercept_test.sh).
#include "proxy/original_destination.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

tunnel::Destination destination(const char* address, std::uint16_t port) {
  tunnel::Destination d;
  d.port = port;
  if (inet_pton(AF_INET, address, d.address.data()) != 1) {
    d.family = tunnel::Destination::Family::ipv6;
    EXPECT_EQ(inet_pton(AF_INET6, address, d.address.data()), 1) << address;
  }
  return d;
}

// A listening socket on `address`, port chosen by the kernel.
class Listener {
 public:
  explicit Listener(const char* address) {
    sockaddr_storage a{};
    socklen_t length;
    if (std::strchr(address, ':')) {
      auto& a6 = reinterpret_cast<sockaddr_in6&>(a);
      a6.sin6_family = AF_INET6;
      inet_pton(AF_INET6, address, &a6.sin6_addr);
      length = sizeof a6;
    } else {
      auto& a4 = reinterpret_cast<sockaddr_in&>(a);
      a4.sin_family = AF_INET;
      inet_pton(AF_INET, address, &a4.sin_addr);
      length = sizeof a4;
    }
    fd_ = socket(a.ss_family, SOCK_STREAM, 0);
    const int off = 0;
    if (a.ss_family == AF_INET6) setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), length), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    length = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length);
    port_ = ntohs(a.ss_family == AF_INET ? reinterpret_cast<sockaddr_in&>(a).sin_port
                                         : reinterpret_cast<sockaddr_in6&>(a).sin6_port);
  }
  ~Listener() { close(fd_); }
  int fd() const { return fd_; }
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

TEST(ListenerItself, BoundAddressAndPortOnly) {
  Listener l("127.0.0.1");
  EXPECT_TRUE(is_listener_itself(destination("127.0.0.1", l.port()), l.fd()));
  EXPECT_FALSE(is_listener_itself(destination("127.0.0.2", l.port()), l.fd()));
  EXPECT_FALSE(is_listener_itself(destination("127.0.0.1", static_cast<std::uint16_t>(l.port() + 1)), l.fd()));
  EXPECT_FALSE(is_listener_itself(destination("::1", l.port()), l.fd()));
}

TEST(ListenerItself, WildcardOwnsEveryLocalAddress) {
  Listener any6("::");
  EXPECT_TRUE(is_listener_itself(destination("::1", any6.port()), any6.fd()));
  EXPECT_TRUE(is_listener_itself(destination("127.0.0.1", any6.port()), any6.fd()));  // dual stack
  EXPECT_TRUE(is_listener_itself(destination("127.9.9.9", any6.port()), any6.fd()));  // all of 127/8
  EXPECT_FALSE(is_listener_itself(destination("192.0.2.1", any6.port()), any6.fd()));  // TEST-NET-1
  EXPECT_FALSE(is_listener_itself(destination("2001:db8::1", any6.port()), any6.fd()));

  Listener any4("0.0.0.0");
  EXPECT_TRUE(is_listener_itself(destination("127.0.0.1", any4.port()), any4.fd()));
  EXPECT_FALSE(is_listener_itself(destination("::1", any4.port()), any4.fd()));
}

// Not redirected: conntrack (when it runs here) gives the listener's own
// address, which is_listener_itself then refuses; without conntrack, an error.
TEST(OriginalDestination, DirectConnectionIsTheListenerItself) {
  Listener l("127.0.0.1");
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(l.port());
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const int accepted = accept(l.fd(), nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  std::string error;
  if (const auto d = original_destination(accepted, &error)) {
    EXPECT_EQ(*d, destination("127.0.0.1", l.port()));
    EXPECT_TRUE(is_listener_itself(*d, l.fd()));
  } else {
    EXPECT_NE(error.find("SO_ORIGINAL_DST: "), std::string::npos) << error;
  }
  close(accepted);
  close(client);
}

TEST(OriginalDestination, NotASocket) {
  std::string error;
  EXPECT_EQ(original_destination(-1, &error), std::nullopt);
  EXPECT_NE(error.find("Bad file descriptor"), std::string::npos) << error;
}

TEST(FormatDestination, BracketsIpv6) {
  EXPECT_EQ(format_destination(destination("10.77.2.2", 80)), "10.77.2.2:80");
  EXPECT_EQ(format_destination(destination("fd77:2::2", 443)), "[fd77:2::2]:443");
}

}  // namespace
}  // namespace egw::proxy
