#include "output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "log.hpp"
#include "record.hpp"

namespace labrun {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPartialInfix = ".new-";

// The PID of `name` if it is `base` + ".new-" + digits, else 0.
long sibling_pid(const std::string& name, const std::string& base) {
  const std::string prefix = base + kPartialInfix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stol(digits);
}

// True while process `pid` exists on this host (EPERM: it exists, as another user's).
bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// True when some process holds a flock(2) on the regular file `path` (a writer at work).
bool file_locked(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

// Writes all of `text` to `fd`. @throws OutputError "cannot write SHOWN: REASON".
void write_all(int fd, const std::string& text, const std::string& shown) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw OutputError("cannot write " + shown + ": " + std::strerror(errno));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Creates `path` (O_EXCL, permissions `mode` less the umask), writes `text`, fsyncs and closes it; `shown` names it
// in errors. @throws OutputError "cannot write SHOWN: REASON".
void write_new_file(const fs::path& path, const std::string& text, const std::string& shown, mode_t mode = 0644) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw OutputError("cannot write " + shown + ": " + std::strerror(errno));
  ::flock(fd, LOCK_EX | LOCK_NB);  // a new file: marks it as being written (remove_stale_siblings)
  try {
    write_all(fd, text, shown);
    if (::fsync(fd) != 0) throw OutputError("cannot write " + shown + ": " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw OutputError("cannot write " + shown + ": " + std::strerror(errno));
}

// The folder `dir` as given, absolute and without a trailing separator.
fs::path folder_path(const std::string& dir) {
  fs::path p = fs::absolute(fs::path(dir)).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

// Refuses a report folder target that is not absent, empty, or an earlier report of `kind` (with `replace`).
void check_folder_target(const fs::path& dir, const std::string& shown, const std::string& kind, bool replace) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw OutputError("cannot examine " + shown + ": " + std::strerror(errno));
  }
  if (::stat(dir.c_str(), &st) != 0)
    throw OutputError(shown + " is a symbolic link to nothing, not a folder; labrun writes a " + kind +
                      " into a folder (choose another -o)");
  if (!S_ISDIR(st.st_mode))
    throw OutputError(shown + " is " + describe_file_type(st.st_mode) + ", not a folder; labrun writes a " + kind +
                      " into a folder (choose another -o)");
  std::error_code ec;
  const bool earlier = fs::exists(dir / (".labrun-" + kind), ec) || fs::exists(dir / (kind + ".md"), ec);
  if (earlier) {
    if (!replace)
      throw OutputError(shown + " already holds a " + (kind == "report" ? "report" : "history report") +
                        "; labrun never overwrites results (use --force)");
    return;
  }
  fs::directory_iterator it(dir, ec);
  if (ec) throw OutputError("cannot list " + shown + ": " + ec.message());
  if (it == fs::directory_iterator()) return;
  throw OutputError(shown + " holds files that are not a labrun " + kind + " (" + it->path().filename().string() +
                    ", ...); labrun writes a " + kind + " only into a new or empty folder, or over an earlier " + kind +
                    " with --force (choose another -o)");
}

// Moves every entry of `from` into `to` (each a rename; a subfolder that exists in `to` is merged into), adding
// each file moved to `made` and each folder merged into to `merged`. @throws OutputError.
void move_into(const fs::path& from, const fs::path& to, std::set<std::string>& made, std::vector<fs::path>& merged) {
  for (const auto& e : fs::directory_iterator(from)) {
    const fs::path target = to / e.path().filename();
    std::error_code ec;
    if (e.is_directory(ec) && !e.is_symlink(ec) && fs::is_directory(fs::symlink_status(target, ec))) {
      merged.push_back(target);
      move_into(e.path(), target, made, merged);
      continue;
    }
    made.insert(target.string());
    if (std::rename(e.path().c_str(), target.c_str()) != 0)
      throw OutputError("cannot move " + e.path().string() + " into " + to.string() + ": " + std::strerror(errno));
  }
}

}  // namespace

std::string describe_file_type(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

void require_regular_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) return;
    throw OutputError(path + " is " + describe_file_type(st.st_mode) +
                      ", not a regular file; labrun writes results only to regular files (choose another -o)");
  }
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    throw OutputError(path +
                      " is a symbolic link to nothing, not a regular file; labrun writes results only to "
                      "regular files (choose another -o)");
  // Absent, or unreachable (the open that follows reports why).
}

bool holds_no_records(const std::string& path) {
  // A torn first line is a labrun record begun ('{') and cut short; a file larger than a record line may be, or
  // that starts with anything else, is not labrun's to replace (case H08: no one's notes are taken for a torn run).
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size > kMaxRecordLineBytes) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!in.eof()) return false;  // a whole line: a record, or something for the readers to refuse
    if (line[line.find_first_not_of(" \t\r")] != '{') return false;  // not a record at all
    try {
      (void)parse_record_line(line);
      return false;  // a record that lost its newline
    } catch (const std::exception&) {
      return true;  // a torn first line
    }
  }
  return true;
}

bool is_partial_name(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  const std::size_t at = name.rfind(kPartialInfix);
  return at != std::string::npos && at > 0 && sibling_pid(name, name.substr(0, at)) > 0;
}

void refuse_partial_input(const std::string& path) {
  if (!is_partial_name(path)) return;
  const std::string name = fs::path(path).filename().string();
  const std::string whole = name.substr(0, name.rfind(kPartialInfix));
  throw std::invalid_argument(path + " is a partial file of an interrupted write (labrun writes " + whole +
                              " beside it as " + name + ", then renames it): it holds no complete result; read " +
                              whole + ", or run the command that writes it again");
}

std::set<std::string> remove_stale_siblings(const std::string& path, bool folders) {
  std::set<std::string> removed;
  const fs::path target(path);
  const std::string base = target.filename().string();
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const long pid = sibling_pid(e.path().filename().string(), base);
    if (pid <= 0 || pid == ::getpid() || process_alive(pid)) continue;
    std::error_code kind;
    if (e.is_regular_file(kind) && file_locked(e.path())) continue;
    // A file's partial sibling is a file; a folder of that name is someone else's (case H07).
    if (!folders && e.symlink_status(kind).type() == fs::file_type::directory) continue;
    stale.push_back(target.parent_path().empty() ? e.path().filename() : e.path());  // named as `path` is
  }
  for (const auto& p : stale)
    if (fs::remove_all(parent / p.filename(), ec) > 0 && !ec) removed.insert(p.string());
  return removed;
}

FileClaim::FileClaim(const std::string& path, const std::string& who)
    : lock_((require_regular_target(path), path)), path_(path), who_(who) {
  require_regular_target(path);  // again, under the lock
  for (const auto& name : remove_stale_siblings(path, false))
    spdlog::warn("{}: removed {}, the partial file of a write that was interrupted", who, name);
  std::error_code ec;
  empty_ = fs::exists(path, ec) && holds_no_records(path);
}

bool FileClaim::replace_empty() const {
  if (empty_)
    spdlog::warn(
        "{}: {} holds no results (0 bytes, or only a torn first line: a run that died as it began); "
        "writing it afresh",
        who_, path_);
  return empty_;
}

void FileClaim::remove_if_empty() const {
  if (replace_empty() && ::unlink(path_.c_str()) != 0 && errno != ENOENT)
    throw OutputError("cannot remove the empty " + path_ + ": " + std::strerror(errno));
}

void write_beside_then_rename(const std::string& path, bool replace,
                              const std::function<void(const std::string& sibling)>& write) {
  require_regular_target(path);
  std::error_code ec;
  if (!replace && fs::exists(fs::symlink_status(path, ec)))
    throw OutputError("output file " + path + " exists; labrun never overwrites results (use --force)");
  const std::string sibling = replacement_path(path, ::getpid());
  try {
    fs::remove(sibling, ec);
    write(sibling);
    if (std::rename(sibling.c_str(), path.c_str()) != 0)
      throw OutputError("cannot rename " + sibling + " to " + path + ": " + std::strerror(errno));
  } catch (...) {
    fs::remove(sibling, ec);
    throw;
  }
}

void write_text_whole(const std::string& path, const std::string& text) {
  write_beside_then_rename(path, true, [&](const std::string& sibling) { write_new_file(sibling, text, path); });
}

void write_texts_whole(const std::vector<TextFile>& files, mode_t mode) {
  std::error_code ec;
  for (const TextFile& f : files) {
    require_regular_target(f.path);
    if (!f.replace && fs::exists(fs::symlink_status(f.path, ec)))
      throw OutputError("output file " + f.path +
                        " exists; labrun never overwrites its earlier output (use --force "
                        "to replace it)");
  }
  std::vector<std::string> siblings;
  try {
    for (const TextFile& f : files) {
      siblings.push_back(replacement_path(f.path, ::getpid()));
      fs::remove(siblings.back(), ec);
      write_new_file(siblings.back(), f.text, f.path, mode);
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (std::rename(siblings[i].c_str(), files[i].path.c_str()) != 0)
        throw OutputError("cannot rename " + siblings[i] + " to " + files[i].path + ": " + std::strerror(errno));
      siblings[i].clear();
    }
  } catch (...) {
    for (const auto& sibling : siblings)
      if (!sibling.empty()) fs::remove(sibling, ec);
    throw;
  }
}

void write_text_file(const fs::path& path, const std::string& text) { write_new_file(path, text, path.string()); }

std::ofstream open_for_write(const fs::path& path) {
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw OutputError("cannot write " + path.string() + ": " + (errno ? std::strerror(errno) : "open failed"));
  return f;
}

void close_or_throw(std::ofstream& f, const fs::path& path) {
  if (f) errno = 0;
  const bool good = static_cast<bool>(f);
  f.close();
  if (good && f) return;
  throw OutputError("cannot write " + path.string() + ": " + (errno ? std::strerror(errno) : "write failed"));
}

ReportFolder::ReportFolder(const std::string& dir, const std::string& kind, bool replace)
    : dir_(folder_path(dir)), kind_(kind), replace_(replace) {
  check_folder_target(dir_, dir, kind_, replace_);
  lock_.emplace(dir_.string());
  check_folder_target(dir_, dir, kind_, replace_);  // again, under the lock
  for (const auto& name : remove_stale_siblings(dir_.string(), true))
    spdlog::warn("labrun {}: removed {}, the partial {} of a write that was interrupted", kind_, name, kind_);
}

ReportFolder::~ReportFolder() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
}

const fs::path& ReportFolder::begin() {
  staging_ = dir_.parent_path() / (dir_.filename().string() + kPartialInfix + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(staging_, ec);
  if (!fs::create_directory(staging_, ec) || ec)
    throw OutputError("cannot create directory " + staging_.string() + " (next to " + dir_.string() +
                      "): " + (ec ? ec.message() : "it exists"));
  return staging_;
}

void ReportFolder::commit() {
  write_text_file(staging_ / (".labrun-" + kind_), "This folder holds a labrun " + kind_ + "; labrun " + kind_ +
                                                       " -o " + dir_.filename().string() + " --force replaces it.\n");
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0 && errno == ENOENT) {
    if (std::rename(staging_.c_str(), dir_.c_str()) != 0)
      throw OutputError("cannot move the " + kind_ + " to " + dir_.string() + ": " + std::strerror(errno));
    staging_.clear();
    return;
  }
  std::set<std::string> made;
  std::vector<fs::path> merged{dir_};
  move_into(staging_, dir_, made, merged);
  std::error_code ec;
  // Plots of the replaced report that this one did not draw would be mistaken for its own.
  if (replace_)
    for (const auto& folder : merged)
      for (const auto& e : fs::directory_iterator(folder, ec))
        if (e.path().extension() == ".png" && !made.count(e.path().string())) fs::remove(e.path(), ec);
  fs::remove_all(staging_, ec);
  staging_.clear();
}

}  // namespace labrun
