// The status socket on a real Unix socket in a temporary directory: clients
// get the rendered status, as text or JSON as they ask; the rates per class
// come from the server's own samples; a crashed gateway's leftover file is
// replaced, a live gateway's is not; the file is private and goes with the server.
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
#include <regex>
#include <thread>

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{5000};
// No rate samples during a test: the replies are exactly render_status(snapshot).
constexpr milliseconds kNoSampling = std::chrono::hours(1);

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
    StatusServer server(io, path, [] { return snapshot(); }, kNoSampling);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(StatusSocket, EachClientGetsTheStatusOfAFreshSnapshot) {
  asio::io_context io;
  std::atomic<int> taken = 0;
  StatusServer server(io, path(), [&] { return snapshot(++taken); }, kNoSampling);
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
    StatusServer server(io, path(), [] { return snapshot(); }, kNoSampling);
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
  StatusServer server(io, path(), [] { return snapshot(); }, kNoSampling);
  IoThread thread(io);
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_EQ(reply.text, render_status(snapshot()));
  thread.stop();
}

TEST_F(StatusSocket, ALiveGatewaysSocketIsAnError) {
  asio::io_context io;
  StatusServer first(io, path(), [] { return snapshot(); }, kNoSampling);
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
  StatusServer server(io, path(), [&] { return big; }, kNoSampling);
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
  StatusServer server(io, path(), [&] { return big; }, kNoSampling);
  IoThread thread(io);
  asio::io_context client_io;
  asio::local::stream_protocol::socket idle(client_io);
  idle.connect(asio::local::stream_protocol::endpoint(path()));  // and never reads
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_TRUE(reply.text.ends_with("\n... (truncated)\n"));
  thread.stop();
}

TEST_F(StatusSocket, JsonOnRequest) {
  asio::io_context io;
  StatusServer server(io, path(), [] { return snapshot(); }, kNoSampling);
  IoThread thread(io);
  const auto reply = query_status(path(), kTimeout, StatusFormat::json);
  ASSERT_FALSE(reply.error) << *reply.error;
  EXPECT_EQ(reply.text, render_status_json(snapshot(), kStatusMaxBytes));
  EXPECT_TRUE(reply.text.starts_with("{\"version\":")) << reply.text;
  thread.stop();
}

// What `socat - UNIX-CONNECT:PATH` does at a terminal: connect, send nothing.
TEST_F(StatusSocket, AClientThatSendsNothingGetsTheTextAfterTheWait) {
  asio::io_context io;
  StatusServer server(io, path(), [] { return snapshot(); }, kNoSampling);
  IoThread thread(io);
  asio::io_context client_io;
  asio::local::stream_protocol::socket client(client_io);
  const auto start = std::chrono::steady_clock::now();
  client.connect(asio::local::stream_protocol::endpoint(path()));
  std::string text;
  boost::system::error_code ec;
  asio::read(client, asio::dynamic_buffer(text), ec);
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_GE(std::chrono::steady_clock::now() - start, kStatusRequestWait - milliseconds(10));
  EXPECT_EQ(text, render_status(snapshot()));
  thread.stop();
}

// The server samples the gateway (here every 100 ms) and a reply carries the
// bytes per second per class since the oldest recent sample: a counter that
// grows at 1 MB/s in html shows as 1 MB/s, the other classes as 0.
TEST_F(StatusSocket, RepliesCarryLiveRatesPerClass) {
  const auto start = std::chrono::steady_clock::now();
  const auto growing = [start] {
    auto s = snapshot();
    s.ensembles[0].key = "k1";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s.ensembles[0].bytes_by_class[static_cast<std::size_t>(ContentClass::html)] =
        static_cast<std::uint64_t>(1e6 * seconds);
    return s;
  };
  asio::io_context io;
  StatusServer server(io, path(), growing, milliseconds(100));
  IoThread thread(io);
  const auto no_rate = query_status(path(), kTimeout);  // no sample 500 ms old yet
  ASSERT_FALSE(no_rate.error) << *no_rate.error;
  EXPECT_EQ(no_rate.text.find("rates:"), std::string::npos) << no_rate.text;
  std::this_thread::sleep_for(milliseconds(800));
  const auto reply = query_status(path(), kTimeout);
  ASSERT_FALSE(reply.error) << *reply.error;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(reply.text, m,
                                std::regex("rates: bytes/s per class over the last ([0-9.]+) s\n[\\s\\S]*"
                                           "\nhub-1 +k1 .* ([0-9.]+)K/0/0/0/0/0/0/0\n")))
      << reply.text;
  EXPECT_GE(std::stod(m[1]), 0.5);
  EXPECT_NEAR(std::stod(m[2]) * 1024, 1e6, 2e4) << reply.text;
  thread.stop();
}

}  // namespace
}  // namespace egw::proxy
