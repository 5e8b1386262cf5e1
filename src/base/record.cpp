#include "record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "output_file.hpp"

namespace labrun {

Json json_real(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

Json json_reals(const std::vector<double>& values) {
  Json a = Json::array();
  for (double v : values) a.push_back(json_real(v));
  return a;
}

double real_from_json(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  throw std::invalid_argument("not a number in a labrun record: " + value.dump());
}

const Json* json_find(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return nullptr;
    auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p;
}

double json_number(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = json_find(j, path);
  if (!p || p->is_null() || p->is_boolean()) return std::numeric_limits<double>::quiet_NaN();
  try {
    return real_from_json(*p);
  } catch (const std::exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

JsonlWriter::JsonlWriter(const std::string& path, bool force) : path_(path) {
  require_regular_target(path);  // never through a device node, FIFO or folder (src/base/output_file.hpp)
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  // --force onto an existing file writes a sibling first: the old results stay until the new run has a complete
  // point, then the sibling is renamed over them (the descriptor follows the rename).
  std::string target = path;
  if (force && std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    target = replacement_path(path, ::getpid());
    pending_ = target;
  }
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_EXCL;
  fd_ = ::open(target.c_str(), flags, 0644);
  if (fd_ < 0) {
    if (errno == EEXIST)
      throw OutputError("output file " + target + " exists; labrun never overwrites results (use --force)");
    throw OutputError("cannot create output file " + target + ": " + std::strerror(errno));
  }
  ::flock(fd_, LOCK_EX | LOCK_NB);  // a new file: nobody else can hold it
}

std::string replacement_path(const std::string& path, long pid) { return path + ".new-" + std::to_string(pid); }

std::size_t drop_torn_tail(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw OutputError("cannot open " + path + ": " + std::strerror(errno));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  off_t end = size;
  char buffer[4096];
  // Back from the end to the last newline.
  while (end > 0) {
    const off_t start = end > static_cast<off_t>(sizeof buffer) ? end - static_cast<off_t>(sizeof buffer) : 0;
    const ssize_t n = ::pread(fd, buffer, static_cast<std::size_t>(end - start), start);
    if (n <= 0) break;
    ssize_t i = n - 1;
    while (i >= 0 && buffer[i] != '\n') --i;
    if (i >= 0) {
      end = start + i + 1;
      break;
    }
    end = start;
  }
  if (end == size) {
    ::close(fd);
    return 0;
  }
  // An unterminated last line that is a whole record (a copy that lost the final newline) is kept, as every
  // reader keeps it: it only gets its newline. Only a line that does not parse is torn, and dropped.
  std::string tail(static_cast<std::size_t>(size - end), '\0');
  const bool read_all = ::pread(fd, tail.data(), tail.size(), end) == static_cast<ssize_t>(tail.size());
  bool whole = false;
  if (read_all) {
    try {
      whole = parse_record_line(tail).is_object();
    } catch (const std::exception&) {
      whole = false;
    }
  }
  if (whole) {
    const bool ok = ::pwrite(fd, "\n", 1, size) == 1;
    ::close(fd);
    if (!ok) throw OutputError("cannot complete the last line of " + path + ": " + std::strerror(errno));
    return 0;
  }
  if (::ftruncate(fd, end) != 0) {
    const int err = errno;
    ::close(fd);
    throw OutputError("cannot truncate " + path + ": " + std::strerror(err));
  }
  ::close(fd);
  return static_cast<std::size_t>(size - end);
}

JsonlWriter::JsonlWriter(const std::string& path, Append) : path_(path) {
  require_regular_target(path);
  drop_torn_tail(path);
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw OutputError("cannot append to " + path + ": " + std::strerror(errno));
  // One writer per file, whatever name it was opened by (a hard link shares the inode and this lock).
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw OutputError(path + " is being written by another labrun; one writer per result file");
  }
  lines_ = 2;  // an existing file: nothing left to replace
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) ::close(fd_);
  // Ended before any point: the old file stays, the new header goes.
  if (!pending_.empty()) ::unlink(pending_.c_str());
}

void JsonlWriter::write(const Json& record) { write_line(record.dump()); }

void JsonlWriter::write_line(const std::string& text) {
  const std::string line = text + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw OutputError("cannot write " + path_ + ": " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ++lines_;
  // The first complete point is on disk: now the new file may replace the old one.
  if (!pending_.empty() && lines_ >= 2) {
    if (std::rename(pending_.c_str(), path_.c_str()) != 0)
      throw OutputError("cannot replace " + path_ + " with " + pending_ + ": " + std::strerror(errno));
    pending_.clear();
  }
}

void JsonlWriter::commit() {
  if (pending_.empty()) return;
  if (std::rename(pending_.c_str(), path_.c_str()) != 0)
    throw OutputError("cannot replace " + path_ + " with " + pending_ + ": " + std::strerror(errno));
  pending_.clear();
}

void JsonlWriter::sync() {
  if (::fsync(fd_) != 0) throw OutputError("fsync of " + path_ + " failed: " + std::strerror(errno));
}

// parse_record_line, RecordLines and read_jsonl: src/records/record_read.cpp.

}  // namespace labrun
