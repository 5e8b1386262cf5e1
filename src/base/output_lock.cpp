#include "output_lock.hpp"
#include "output_file.hpp"  // describe_file_type

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "record.hpp"

namespace labrun {

namespace {

// The lock file of `path`: beside the file the path resolves to (a symlink and its target share one lock).
std::string lock_file_of(const std::string& path) {
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(path, ec);
  return (ec ? std::filesystem::path(path) : resolved).string() + ".lock";
}

}  // namespace

OutputLock::OutputLock(const std::string& path) : lock_path_(lock_file_of(path)) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec) && !std::filesystem::create_directories(parent, ec))
    throw OutputError("cannot create the folder " + parent.string() + " for the results: " + ec.message() +
                      " (choose a writable place with -o PATH)");
  for (int attempt = 0; attempt < 100; ++attempt) {
    // Never through a link, never a device or FIFO (case H01): the lock file is written (our pid) and unlinked.
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0 && errno == ELOOP)
      throw OutputError("the lock file " + lock_path_ +
                        " is a symbolic link; labrun's lock files are regular files "
                        "(remove it, or choose another -o)");
    if (fd_ < 0)
      throw OutputError("cannot create the lock file " + lock_path_ + ": " + std::strerror(errno) +
                        (errno == ENOENT || errno == EACCES || errno == EROFS
                             ? " (is the output's folder writable? choose another with -o)"
                             : ""));
    if (struct stat st{}; ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      throw OutputError(
          "the lock file " + lock_path_ + " is " + describe_file_type(st.st_mode) +
          ", not a regular file; labrun's lock files are regular files (remove it, or choose another -o)");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char pid[32] = {0};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK)
        throw OutputError(path + " is being written by another labrun" +
                          (n > 0 ? " (pid " + std::string(pid, static_cast<std::size_t>(n)) + ")" : "") +
                          "; one writer per result file: wait for it, or choose another -o");
      throw OutputError("cannot lock " + lock_path_ + ": " + std::strerror(err));
    }
    // The file we locked must still be the one the path names: an owner that finished unlinks it, and a lock on
    // the unlinked inode would guard nothing.
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      const std::string pid = std::to_string(::getpid());
      if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
      // The file's writer (a worker's JsonlWriter) holds a lock on the file itself, so another name for it (a hard
      // link) is caught here by a probe of that lock.
      const int probe = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const bool held = probe >= 0 && ::flock(probe, LOCK_EX | LOCK_NB) != 0;
      if (probe >= 0) ::close(probe);
      if (held) {
        ::unlink(lock_path_.c_str());
        ::close(fd_);
        fd_ = -1;
        throw OutputError(path +
                          " is being written by another labrun (under another name: a link to the same "
                          "file); one writer per result file: wait for it, or choose another -o");
      }
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw OutputError("cannot lock " + lock_path_ + ": it keeps being replaced");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still holding the lock: a waiter re-checks the inode
  ::close(fd_);
}

}  // namespace labrun
