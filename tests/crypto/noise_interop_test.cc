// Interop with an independent Noise implementation: the Python package
// `noiseprotocol` (tests/crypto/noise_interop.py), over the stdin/stdout of a
// subprocess. IK and IKpsk2, each side in each role: both handshake messages,
// the handshake hash, and transport messages both ways.
//
// The interpreter: $EGW_NOISE_PYTHON, else build/pyenv/bin/python3 (made by
// scripts/noise-interop-env.sh, which scripts/test.sh runs). Missing, the test
// FAILS, saying so; EGW_SKIP_NOISE_INTEROP=1 skips it deliberately.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/noise_ik.h"

extern char** environ;

namespace egw::tunnel::crypto {
namespace {

using test::from_hex;
using test::to_hex;

const std::string kPayload1 = "interop message 1 from the initiator";
const std::string kPayload2 = "interop message 2 from the responder";

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::vector<std::uint8_t> payload(int i) {
  std::vector<std::uint8_t> out;
  for (int j = 0; j < i * 50; ++j) out.push_back(static_cast<std::uint8_t>((i * 31 + j) % 256));
  return out;
}
std::vector<std::uint8_t> reply(int i) {
  auto out = payload(i);
  std::reverse(out.begin(), out.end());
  out.push_back('!');
  return out;
}

std::string source_root() { return test::test_dir() + "/../.."; }

std::string python_path() {
  if (const char* env = std::getenv("EGW_NOISE_PYTHON"); env != nullptr && *env != '\0') return env;
  return source_root() + "/build/pyenv/bin/python3";
}

// A child process with its stdin and stdout on pipes; lines in and out.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }
  ~Child() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }

  void send_line(const std::string& line) {
    const std::string data = line + "\n";
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(in_, data.data() + done, data.size() - done);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }
  // The next line, or nullopt at EOF or after 10 s of silence.
  std::optional<std::string> read_line() {
    for (;;) {
      const auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) return std::nullopt;
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  int wait() {
    ::close(in_);
    in_ = -1;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

void require_python() {
  if (const char* skip = std::getenv("EGW_SKIP_NOISE_INTEROP"); skip && std::string(skip) == "1") {
    GTEST_SKIP() << "EGW_SKIP_NOISE_INTEROP=1";
  }
  const std::string python = python_path();
  const std::string probe = "'" + python + "' -c 'import noise.connection' >/dev/null 2>&1";
  ASSERT_EQ(std::system(probe.c_str()), 0)
      << "the Noise interop test needs Python with the `noiseprotocol` package at " << python
      << ": run scripts/noise-interop-env.sh (scripts/test.sh does), or set EGW_NOISE_PYTHON to "
         "such an interpreter, or EGW_SKIP_NOISE_INTEROP=1 to skip this test";
}

constexpr int kTransportMessages = 6;

void run_interop(bool we_initiate, bool with_psk) {
  SCOPED_TRACE(std::string(we_initiate ? "ours initiator" : "ours responder") +
               (with_psk ? ", IKpsk2" : ", IK"));
  const Key32 our_private = x25519_generate_private();
  const Key32 their_private = x25519_generate_private();
  const Key32 psk = x25519_generate_private();
  const std::vector<std::uint8_t> prologue = bytes("ensemble-gw interop");

  std::vector<std::string> argv = {python_path(), test::test_dir() + "/noise_interop.py",
                                   "--role", we_initiate ? "responder" : "initiator",
                                   "--static", to_hex(their_private),
                                   "--prologue", to_hex(prologue),
                                   "--transport", std::to_string(kTransportMessages)};
  if (we_initiate) {
    argv.insert(argv.end(), {"--expect-remote", to_hex(x25519_public_key(our_private))});
  } else {
    argv.insert(argv.end(), {"--remote", to_hex(x25519_public_key(our_private))});
  }
  if (with_psk) argv.insert(argv.end(), {"--psk", to_hex(psk)});
  Child python(argv);
  ASSERT_TRUE(python.started()) << "cannot start " << argv[0];

  NoiseIkConfig config;
  config.initiator = we_initiate;
  config.local_static_private = our_private;
  config.prologue = prologue;
  if (we_initiate) {
    config.remote_static_public = x25519_public_key(their_private);
    if (with_psk) config.psk = psk;
  } else if (with_psk) {
    config.use_psk = true;  // chosen after message 1, by the initiator's key
  }
  NoiseIk ours(config);

  if (we_initiate) {
    python.send_line(to_hex(ours.write_message(bytes(kPayload1))));
    const auto message2 = python.read_line();
    ASSERT_TRUE(message2) << "no message 2 from Python";
    ASSERT_EQ(message2->size(), 2 * NoiseIk::message2_bytes(kPayload2.size()));
    const auto payload2 = ours.read_message(from_hex(*message2));
    ASSERT_TRUE(payload2) << "Python's message 2 rejected";
    EXPECT_EQ(*payload2, bytes(kPayload2));
  } else {
    const auto message1 = python.read_line();
    ASSERT_TRUE(message1) << "no message 1 from Python";
    ASSERT_EQ(message1->size(), 2 * NoiseIk::message1_bytes(kPayload1.size()));
    const auto payload1 = ours.read_message(from_hex(*message1));
    ASSERT_TRUE(payload1) << "Python's message 1 rejected";
    EXPECT_EQ(*payload1, bytes(kPayload1));
    ASSERT_EQ(ours.remote_static(), x25519_public_key(their_private));
    if (with_psk) {
      ASSERT_TRUE(ours.set_psk(psk));
    }
    python.send_line(to_hex(ours.write_message(bytes(kPayload2))));
  }
  ASSERT_TRUE(ours.is_complete());
  const auto hash = python.read_line();
  ASSERT_TRUE(hash) << "Python did not finish the handshake";
  EXPECT_EQ(*hash, "hash " + to_hex(ours.handshake_hash()));

  const auto keys = ours.split();
  ChaChaPolyKey send(keys.send), receive(keys.receive);
  for (int i = 0; i < kTransportMessages; ++i) {
    SCOPED_TRACE("transport " + std::to_string(i));
    const auto expected_in = we_initiate ? reply(i) : payload(i);
    const auto out = we_initiate ? payload(i) : reply(i);
    auto exchange_send = [&] {
      std::vector<std::byte> packet(out.size() + ChaChaPolyKey::kTagBytes);
      std::copy(out.begin(), out.end(), reinterpret_cast<std::uint8_t*>(packet.data()));
      send.seal(static_cast<std::uint64_t>(i), {}, packet);
      python.send_line(to_hex(packet));
    };
    if (we_initiate) exchange_send();
    const auto line = python.read_line();
    ASSERT_TRUE(line) << "Python stopped";
    auto in = from_hex(*line);
    ASSERT_EQ(in.size(), expected_in.size() + ChaChaPolyKey::kTagBytes);
    auto packet = std::as_writable_bytes(std::span(in));
    ASSERT_TRUE(receive.open(static_cast<std::uint64_t>(i), {}, packet));
    EXPECT_EQ(std::vector<std::uint8_t>(in.begin(), in.end() - ChaChaPolyKey::kTagBytes),
              expected_in);
    if (!we_initiate) exchange_send();
  }
  EXPECT_EQ(python.read_line(), "ok");
  EXPECT_EQ(python.wait(), 0) << "noise_interop.py failed (its stderr is above)";
}

TEST(CryptoNoiseInterop, IkOursInitiatorPythonResponder) {
  require_python();
  if (!HasFatalFailure() && !IsSkipped()) run_interop(true, false);
}
TEST(CryptoNoiseInterop, IkPythonInitiatorOursResponder) {
  require_python();
  if (!HasFatalFailure() && !IsSkipped()) run_interop(false, false);
}
TEST(CryptoNoiseInterop, Ikpsk2OursInitiatorPythonResponder) {
  require_python();
  if (!HasFatalFailure() && !IsSkipped()) run_interop(true, true);
}
TEST(CryptoNoiseInterop, Ikpsk2PythonInitiatorOursResponder) {
  require_python();
  if (!HasFatalFailure() && !IsSkipped()) run_interop(false, true);
}

}  // namespace
}  // namespace egw::tunnel::crypto
