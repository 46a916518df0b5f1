// PrivateNetns: the sockets a test makes in its scope live in a fresh network
// namespace of their own (this thread only enters it; it leaves at the end of
// the scope). Its loopback is up and `setup` ran in it (ip / tc commands:
// extra addresses, a rate-limited qdisc). Nothing is named and nothing needs
// cleaning up: the namespace goes away with the last socket in it. Needs
// root (CAP_SYS_ADMIN); error() says why it could not be made.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace egw::test_support {

class PrivateNetns {
 public:
  explicit PrivateNetns(const std::string& setup) {
    if (::geteuid() != 0) {
      error_ = "needs root";
      return;
    }
    original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original_ < 0 || ::unshare(CLONE_NEWNET) != 0) {
      error_ = std::string("cannot create a network namespace: ") + std::strerror(errno);
      return;
    }
    entered_ = true;
    inside_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    // A child process inherits this thread's namespace.
    const std::string command = "ip link set lo up" + (setup.empty() ? "" : " && " + setup);
    if (std::system(command.c_str()) != 0) error_ = "setup failed: " + command;
  }
  ~PrivateNetns() {
    leave();
    if (original_ >= 0) ::close(original_);
    if (inside_ >= 0) ::close(inside_);
  }
  PrivateNetns(const PrivateNetns&) = delete;
  PrivateNetns& operator=(const PrivateNetns&) = delete;

  // Back to the test's own namespace (the sockets made so far stay inside).
  void leave() {
    if (entered_ && ::setns(original_, CLONE_NEWNET) != 0) std::abort();  // later tests would run inside
    entered_ = false;
  }
  // Runs a command inside (after leave() too): true when it succeeded.
  bool run(const std::string& command) {
    if (!entered_ && (inside_ < 0 || ::setns(inside_, CLONE_NEWNET) != 0)) return false;
    const bool ok = std::system(command.c_str()) == 0;
    if (!entered_ && ::setns(original_, CLONE_NEWNET) != 0) std::abort();
    return ok;
  }
  const std::string& error() const { return error_; }

 private:
  int original_ = -1;
  int inside_ = -1;
  bool entered_ = false;
  std::string error_;
};

}  // namespace egw::test_support
