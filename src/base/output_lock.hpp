// One writer per result file: an exclusive advisory lock (flock(2)) on PATH.lock, held by the sweep that writes
// PATH for as long as it runs, its workers included. A second sweep onto the same PATH is refused at once.
#pragma once

#include <string>

namespace labrun {

/// An exclusive lock on the resolved path (symlinks followed) + ".lock", and a probe of the lock the file's writer
/// holds on the file itself (JsonlWriter), which a hard link shares (created if absent, holding the owner's pid for the
/// message), released and the lock file removed by the destructor; the kernel releases it if the process dies, so a
/// stale lock file never blocks a later run. Removal is race-free: the lock is only taken on the file the path names
/// (re-checked by inode after locking).
class OutputLock {
 public:
  /// @throws OutputError "… is being written by another labrun (pid N) …" when another process holds it, or
  /// when the lock file cannot be created.
  explicit OutputLock(const std::string& path);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace labrun
