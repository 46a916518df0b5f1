// SIGHUP with a changed peer list, on two real gateways on loopback: allow
// lists follow their peers' public keys, never their positions in the file
// (issue 19 item 6).
#include <gtest/gtest.h>

#include <future>

#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"

namespace egw::proxy {
namespace {

using test_support::loopback;

class GatewayReload : public test_support::LoopbackGatewayPair {
 protected:
  void SetUp() override {
    make_dir("egw-gw-reload");
    branch_public_ = make_key("branch");
    hub_public_ = make_key("hub");
    for (const char* name : {"x1", "x2"}) others_.push_back(make_key(name));
  }
  // The hub's config with these peers ("name key allow" entries).
  std::string hub_with(const std::vector<std::string>& peers) {
    std::string text = "role: hub\nprivate_key_file: " + key("hub") + "\nlisten: 127.0.0.1:0\npeers:\n";
    for (const auto& p : peers) text += p;
    return text + "metrics_listen: \"\"\nstatus_socket: \"\"\n";
  }
  static std::string peer(const std::string& name, const std::string& key, std::uint16_t port) {
    return "  - {name: " + name + ", public_key: " + key + ", allow: [\"127.0.0.1/32:" + std::to_string(port) + "\"]}\n";
  }
  void start(const std::vector<std::string>& peers) {
    hub_ = std::make_unique<Gateway>(io_, load(write("hub.yaml", hub_with(peers))));
    hub_->start();
    start_branch_gateway(hub_port());
    start_io();
  }
  void reload(const std::vector<std::string>& peers) {
    auto next = load(write("hub2.yaml", hub_with(peers)));
    std::promise<void> done;
    boost::asio::post(io_, [&] {
      hub_->reload(next);
      done.set_value();
    });
    done.get_future().get();
  }
  // 0 if the server at `port` answered through the gateways, else the errno.
  int reach(std::uint16_t port) {
    set_target(loopback(port));
    return read_error_after("hello\n");
  }

  // Reads the request to its end first: closing with unread bytes would
  // reset the connection.
  static void answer(int fd) {
    int error = 0;
    test_support::read_all(fd, &error);
    test_support::send_all(fd, std::vector<std::uint8_t>{'h', 'i', '\n'});
    ::close(fd);
  }
  std::vector<std::string> others_;
  test_support::LoopbackServer a_{answer};
  test_support::LoopbackServer b_{answer};
};

// A peer inserted before the branch's entry: the branch kept its own list.
// Before: it got the new peer's, so B (refused before) was reached after.
TEST_F(GatewayReload, InsertingAPeerKeepsEachPeersAllowList) {
  start({peer("b1", branch_public_, a_.port()), peer("x2", others_[1], b_.port())});
  EXPECT_EQ(reach(a_.port()), 0);
  EXPECT_EQ(reach(b_.port()), ECONNRESET);
  reload({peer("x1", others_[0], b_.port()), peer("b1", branch_public_, a_.port()), peer("x2", others_[1], b_.port())});
  EXPECT_EQ(reach(b_.port()), ECONNRESET);
  EXPECT_EQ(reach(a_.port()), 0);
  EXPECT_EQ(snapshot(*hub_).config_reloads, 1u);
}

// 3 peers -> 1. Before: the reload read allow lists past the end of the
// new list (valgrind: invalid read). Now the remaining peer keeps its list
// and a removed peer allows nothing until the restart.
TEST_F(GatewayReload, GoingFromThreePeersToOne) {
  start({peer("x1", others_[0], b_.port()), peer("x2", others_[1], b_.port()), peer("b1", branch_public_, a_.port())});
  EXPECT_EQ(reach(a_.port()), 0);
  reload({peer("x2", others_[1], b_.port())});  // b1 removed: refused from now on
  EXPECT_EQ(reach(a_.port()), ECONNRESET);
  reload({peer("b1", branch_public_, b_.port())});  // back, with another list
  EXPECT_EQ(reach(b_.port()), 0);
  EXPECT_EQ(reach(a_.port()), ECONNRESET);
  EXPECT_TRUE(snapshot(*branch_).ensembles[0].up);
}

}  // namespace
}  // namespace egw::proxy
