#include "proxy/privileges.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string_view>

namespace egw::proxy {
namespace {

constexpr std::uint64_t kNetAdmin = std::uint64_t{1} << CAP_NET_ADMIN;

struct Caps {
  std::uint64_t effective = 0, permitted = 0, inheritable = 0;
};

std::optional<Caps> get_caps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return std::nullopt;
  const auto join = [](std::uint32_t lo, std::uint32_t hi) { return (std::uint64_t{hi} << 32) | lo; };
  return Caps{join(data[0].effective, data[1].effective), join(data[0].permitted, data[1].permitted),
              join(data[0].inheritable, data[1].inheritable)};
}

bool set_caps(const Caps& c) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  for (int i = 0; i < 2; ++i) {
    data[i].effective = static_cast<std::uint32_t>(c.effective >> (32 * i));
    data[i].permitted = static_cast<std::uint32_t>(c.permitted >> (32 * i));
    data[i].inheritable = static_cast<std::uint32_t>(c.inheritable >> (32 * i));
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

int last_cap() {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int n = 0;
  return f >> n && n > 0 && n < 64 ? n : 40;  // 40 (CAP_CHECKPOINT_RESTORE) since Linux 5.9
}

// "Threads:" of /proc/self/status: 0 if unknown.
int thread_count() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

struct Target {
  uid_t uid;
  gid_t gid;
};

// The user by name or number; nullopt with `error` set if unknown.
std::optional<Target> resolve(const std::string& user, std::string& error) {
  unsigned long number = 0;
  const auto [end, ec] = std::from_chars(user.data(), user.data() + user.size(), number);
  const bool numeric = ec == std::errc{} && end == user.data() + user.size();
  const passwd* pw = numeric ? ::getpwuid(static_cast<uid_t>(number)) : ::getpwnam(user.c_str());
  if (pw) return Target{pw->pw_uid, pw->pw_gid};
  if (numeric) return Target{static_cast<uid_t>(number), static_cast<gid_t>(number)};
  error = "user: no user '" + user + "' on this host";
  return std::nullopt;
}

// Every capability but `keep`'s out of the bounding set (needs CAP_SETPCAP).
std::optional<std::string> shrink_bounding_set(std::uint64_t keep) {
  for (int c = 0; c <= last_cap(); ++c) {
    if (keep & (std::uint64_t{1} << c)) continue;
    if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL) return errno_text("PR_CAPBSET_DROP");
  }
  return std::nullopt;
}

std::string describe(std::uint64_t caps) {
  if (caps == 0) return "none";
  if (caps == kNetAdmin) return "cap_net_admin";
  if (caps == (kNetAdmin | std::uint64_t{1} << CAP_NET_BIND_SERVICE)) return "cap_net_admin, cap_net_bind_service";
  return "others";
}

}  // namespace

PrivilegeDrop drop_privileges(const std::string& user, std::uint64_t also_keep) {
  PrivilegeDrop out;
  const auto fail = [&](std::string why) {
    out.error = std::move(why);
    return out;
  };
  if (thread_count() > 1) return fail("dropping privileges: other threads exist already (capabilities are per thread)");
  std::optional<Target> target;
  if (!user.empty()) {
    std::string error;
    target = resolve(user, error);
    if (!target) return fail(error);
  }
  const auto before = get_caps();
  if (!before) return fail(errno_text("capget"));
  const bool switching = target && (::getuid() != target->uid || ::geteuid() != target->uid ||
                                    ::getgid() != target->gid || ::getegid() != target->gid);
  bool bounded = false;
  if (before->effective & (std::uint64_t{1} << CAP_SETPCAP)) {
    if (auto err = shrink_bounding_set(kNetAdmin | also_keep)) return fail(*err);
    bounded = true;
  }
  if (switching) {
    // Keep the permitted set across the uid change; the effective set is
    // cleared by it and restored below.
    if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return fail(errno_text("PR_SET_KEEPCAPS"));
    if (::setgroups(1, &target->gid) != 0) return fail(errno_text(("user: setgroups for '" + user + "'").c_str()));
    if (::setresgid(target->gid, target->gid, target->gid) != 0) return fail(errno_text(("user: setresgid for '" + user + "'").c_str()));
    if (::setresuid(target->uid, target->uid, target->uid) != 0) return fail(errno_text(("user: setresuid for '" + user + "'").c_str()));
    ::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  }
  const std::uint64_t keep = before->permitted & (kNetAdmin | also_keep);
  // Started unprivileged (a file or ambient capability, a systemd sandbox
  // that may filter these calls): already confined, so a refused step is
  // noted, not fatal. As root every step must succeed.
  const bool confined_already = ::geteuid() != 0 && !switching;
  std::string left;
  const auto step = [&](bool ok, const char* what) {
    if (ok) return true;
    if (!confined_already) return false;
    left += std::string(", ") + what + " refused (" + std::strerror(errno) + "): left as started";
    return true;
  };
  if (!step(set_caps(Caps{keep, keep, 0}), "capset")) return fail(errno_text("capset"));
  // Ambient capabilities only matter across exec; none survive (EINVAL: a kernel before 4.3).
  const bool ambient = ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0 || errno == EINVAL;
  if (!step(ambient, "clearing ambient capabilities")) return fail(errno_text("PR_CAP_AMBIENT_CLEAR_ALL"));
  if (!step(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs")) {
    return fail(errno_text("PR_SET_NO_NEW_PRIVS"));
  }
  const auto after = get_caps();
  if (!after) return fail(errno_text("capget"));
  if (!confined_already && (after->effective != keep || after->permitted != keep)) {
    return fail("capabilities not dropped");
  }
  out.summary = "uid " + std::to_string(::geteuid()) + ", gid " + std::to_string(::getegid()) +
                ", capabilities: " + describe(after->effective) +
                (bounded ? ", bounding set: " + describe(kNetAdmin | also_keep)
                         : std::string(", bounding set as started (no CAP_SETPCAP)")) +
                (left.empty() ? ", no_new_privs" : left);
  return out;
}

}  // namespace egw::proxy
