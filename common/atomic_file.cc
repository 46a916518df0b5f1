#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

namespace egw {
namespace {

void set_error(std::string* error, std::string_view what, const std::filesystem::path& path,
               int err) {
  if (error == nullptr) return;
  // append() rather than operator+: gcc 12 -O3 reports a false -Wrestrict
  // for chains of string concatenation.
  error->assign(what);
  error->append(" ").append(path.string()).append(": ");
  error->append(std::error_code(err, std::generic_category()).message());
}

// Closes on scope exit; close errors after fsync carry no extra information.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

bool write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           std::string* error) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // A hidden sibling with a unique suffix: never collides with a concurrent writer.
  std::string temp_name(".");
  temp_name.append(path.filename().string()).append(".tmp.XXXXXX");
  std::string tmpl = (dir / temp_name).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int raw_fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (raw_fd < 0) {
    set_error(error, "cannot create temporary file for", path, errno);
    return false;
  }
  const std::filesystem::path tmp(name.data());
  {
    Fd fd(raw_fd);
    if (!write_all(fd.get(), contents)) {
      const int err = errno;
      ::unlink(tmp.c_str());
      set_error(error, "cannot write", tmp, err);
      return false;
    }
    if (::fsync(fd.get()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      set_error(error, "cannot fsync", tmp, err);
      return false;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    set_error(error, "cannot rename temporary file onto", path, err);
    return false;
  }
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0 || ::fsync(dir_fd.get()) != 0) {
    // The new contents are in place; only the rename's durability is unsure.
    set_error(error, "cannot fsync directory", dir, errno);
    return false;
  }
  return true;
}

std::optional<std::string> read_file(const std::filesystem::path& path, std::string* error,
                                     std::size_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    set_error(error, "cannot open", path, errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    set_error(error, "cannot stat", path, errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    set_error(error, "not a regular file:", path, EINVAL);
    return std::nullopt;
  }
  std::string out;
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      set_error(error, "cannot read", path, errno);
      return std::nullopt;
    }
    if (n == 0) break;
    // Checked while reading, not from st_size: the file may grow meanwhile.
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      std::string what("file larger than ");
      what.append(std::to_string(max_bytes)).append(" bytes:");
      set_error(error, what, path, EFBIG);
      return std::nullopt;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace egw
