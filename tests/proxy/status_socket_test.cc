// The status socket on a real Unix socket in a temporary directory: clients
// get the rendered status; a crashed gateway's leftover file is replaced, a
// live gateway's is not; the file is private and goes with the server.
#include "proxy/status_socket.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{5000};

// The gateway's I/O thread. Stopped (and joined) before the server is
// destroyed, as the server must not be touched from two threads at once.
class IoThread {
 public:
  explicit IoThread(asio::io_context& io) : io_(io), work_(asio::make_work_guard(io)), thread_([&io] { io.run(); }) {}
  ~IoThread() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

 private:
  asio::io_context& io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

class StatusSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = (fs::temp_directory_path() / "egw-status-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name = "gw.sock") const { return (dir_ / name).string(); }

  fs::path dir_;
};

GatewaySnapshot snapshot(double uptime = 42, std::size_t streams = 1) {
  GatewaySnapshot s;
  s.role = "branch";
  s.uptime_seconds = uptime;
  EnsembleSnapshot e;
  e.peer = "hub-1";
  e.up = true;
  s.ensembles.push_back(e);
  for (std::size_t i = 0; i < streams; ++i) {
    StreamSnapshot st;
    st.stream_id = i;
    st.client = "10.1.0.5:" + std::to_string(40000 + i % 20000);
    st.destination = "93.184.216.34:443";
    st.state = "open";
    s.streams.push_back(st);
  }
  return s;
}

// A raw Unix socket bound at `path`: listening, or closed at once (the file
// stays, nobody accepts: what a crashed gateway leaves behind).
int bind_raw(const std::string& path, bool listen) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  if (listen) {
    EXPECT_EQ(::listen(fd, 8), 0);
    return fd;
  }
  ::close(fd);
  return -1;
}

std::string construction_error(asio::io_context& io, const std::string& path) {
  try {
    StatusServer server(io, path, [] { return snapshot(); });
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(StatusSocket, EachClientGetsTheStatusOfAFreshSnapshot) {
  asio::io_context io;
  std::atomic<int> taken = 0;
  StatusServer server(io, path(), [&] { return snapshot(++taken); });
  IoThread thread(io);

  const auto first = query_status(path(), kTimeout);
  ASSERT_FALSE(first.error) << *first.error;
  EXPECT_EQ(first.text, render_status(snapshot(1)));
  const auto second = query_status(path(), kTimeout);
  ASSERT_FALSE(second.error) << *second.error;
  EXPECT_EQ(second.text, render_status(snapshot(2)));
  thread.stop();
}

TEST_F(StatusSocket, FileIsPrivateAndRemovedWithTheServer) {
  asio::io_context io;
  {
    StatusServer server(io, path(), [] { return snapshot(); });
    struct stat st {};
    ASSERT_EQ(::lstat(path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(path())));
}

TEST_F(StatusSocket, StaleSocketFileIsReplaced) {
  bind_raw(path(), /*listen=*/false);
  ASSERT_TRUE(fs::is_socket(path()));
  asio::io_context io;
  StatusServer server(io, path(), [] { return snapshot(); });
  IoThread thread(io);
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_EQ(reply.text, render_status(snapshot()));
  thread.stop();
}

TEST_F(StatusSocket, ALiveGatewaysSocketIsAnError) {
  asio::io_context io;
  StatusServer first(io, path(), [] { return snapshot(); });
  EXPECT_EQ(construction_error(io, path()),
            "status socket " + path() + ": in use: another gateway is running (it accepts connections there)");
  // The first one keeps its file and still answers.
  IoThread thread(io);
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_EQ(reply.text, render_status(snapshot()));
  thread.stop();
}

TEST_F(StatusSocket, AnyOtherFileIsLeftAlone) {
  std::ofstream(path()) << "not a socket\n";
  asio::io_context io;
  EXPECT_EQ(construction_error(io, path()), "status socket " + path() + ": exists and is not a socket; not replacing it");
  EXPECT_TRUE(fs::is_regular_file(path()));
}

TEST_F(StatusSocket, UnbindablePathsNameThemselves) {
  asio::io_context io;
  const auto missing_dir = path("no-such-dir/gw.sock");
  EXPECT_EQ(construction_error(io, missing_dir), "status socket " + missing_dir + ": cannot bind: No such file or directory");
  const std::string too_long = "/tmp/" + std::string(120, 'x') + ".sock";
  EXPECT_EQ(construction_error(io, too_long), "status socket " + too_long + ": socket path is 130 bytes, at most 107");
}

TEST_F(StatusSocket, QueryOfAMissingSocketNamesIt) {
  const auto missing = path("missing.sock");
  const auto reply = query_status(missing, kTimeout);
  ASSERT_TRUE(reply.error);
  EXPECT_EQ(*reply.error, "cannot connect to " + missing + ": No such file or directory (is the gateway running?)");
  EXPECT_EQ(reply.text, "");
}

TEST_F(StatusSocket, QueryGivesUpOnASilentServer) {
  const int fd = bind_raw(path(), /*listen=*/true);  // accepts (in the backlog), never answers
  const auto reply = query_status(path(), milliseconds(200));
  ASSERT_TRUE(reply.error);
  EXPECT_EQ(*reply.error, "no status from " + path() + " within 200 ms");
  ::close(fd);
}

TEST_F(StatusSocket, LongStatusIsCutAtALine) {
  const auto big = snapshot(42, 5000);
  ASSERT_GT(render_status(big).size(), kStatusMaxBytes);
  asio::io_context io;
  StatusServer server(io, path(), [&] { return big; });
  IoThread thread(io);
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_LE(reply.text.size(), kStatusMaxBytes);
  EXPECT_TRUE(reply.text.ends_with("\n... (truncated)\n"));
  EXPECT_EQ(render_status(big).rfind(reply.text.substr(0, reply.text.size() - 16), 0), 0u);  // a prefix
  thread.stop();
}

TEST_F(StatusSocket, AClientThatDoesNotReadStallsNoOne) {
  const auto big = snapshot(42, 5000);  // more than the socket buffer holds
  asio::io_context io;
  StatusServer server(io, path(), [&] { return big; });
  IoThread thread(io);
  asio::io_context client_io;
  asio::local::stream_protocol::socket idle(client_io);
  idle.connect(asio::local::stream_protocol::endpoint(path()));  // and never reads
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_TRUE(reply.text.ends_with("\n... (truncated)\n"));
  thread.stop();
}

}  // namespace
}  // namespace egw::proxy
