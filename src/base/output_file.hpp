// labrun's one writer policy, for every command that writes a file or a folder (sweep -o, merge -o, the pooled
// and --devices result, slurm's scripts, the reference cache; report -o and history -o folders):
//
// - Regular files only: a target that exists and is not a regular file (a device node, a FIFO, a socket, a
//   folder, a dangling symlink) is refused naming the path and what it is, and nothing is touched. A report
//   folder must be new, empty or an earlier report of the same kind.
// - One writer: an exclusive lock on the target (src/base/output_lock.hpp: PATH.lock beside it, for files and folders
//   alike); a second writer is refused.
// - Whole or not at all: a file is written beside the target (PATH.new-PID) and renamed over it; a folder is made
//   beside it (DIR.new-PID) and moved in. The beside-file is removed on every failure path.
// - A beside-file left by a writer that died (PATH.new-PID whose process is gone, whose lock nobody holds) is
//   removed by the next writer of PATH, and the readers refuse a name of that form (a partial file).
// - An existing file that holds no record (0 bytes, blank, or only an unparsable torn first line) is no result:
//   the next writer writes it afresh, saying so; a writer that fails before it writes leaves it as it was.
// - Files written together (slurm's two scripts) are all written beside their targets first and renamed only when
//   every one was written whole: a full disk never leaves one without the other.
// Every refusal and write error is an OutputError (exit 4) and carries strerror's reason where there is one.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "output_lock.hpp"

namespace labrun {

/// What a file of type `mode` (st_mode) is, for a message: "a regular file", "a folder", "a character device",
/// "a block device", "a named pipe (FIFO)", "a socket", or "not a regular file".
std::string describe_file_type(mode_t mode);

/// Refuses a file target that exists and is not a regular file (symlinks followed). Touches nothing.
/// @throws OutputError "PATH is a character device, not a regular file; labrun writes results only to regular
///   files (choose another -o)", or "PATH is a symbolic link to nothing, ...".
void require_regular_target(const std::string& path);

/// True when the regular file `path` holds no record: 0 bytes, only blank lines, or a single unterminated line
/// that begins a JSON object ('{') and does not parse (the header of a run killed while writing it). False when it
/// cannot be read, is larger than kMaxRecordLineBytes, holds a terminated non-blank line, a parsable one, or a line
/// that is no record at all (someone's file: for the writer to refuse, case H08). Never throws.
bool holds_no_records(const std::string& path);

/// True for a name of the form X.new-DIGITS: the beside-file of a write in progress or interrupted.
bool is_partial_name(const std::string& path);

/// Refuses a partial file given as an input to a reader (report, diff, history, merge).
/// @throws std::invalid_argument "PATH is a partial file of an interrupted write (...)" when is_partial_name().
void refuse_partial_input(const std::string& path);

/// Removes the beside-files PATH.new-PID of writers that died: the process PID is gone and, for a file, nobody
/// holds a lock on it. Folders of that name are removed only when `folders` (a report's staging folder); a file's
/// writer leaves files only, so a folder beside a result file is someone else's and stays (case H07). Call while
/// holding PATH's OutputLock. Returns the names removed. Never throws.
std::set<std::string> remove_stale_siblings(const std::string& path, bool folders);

/// A writer's claim on a result file (sweep -o, merge -o, slurm's scripts): require_regular_target(), then the
/// one-writer lock, then remove_stale_siblings(). Held for the whole write. A target that holds_no_records() is no
/// result: the writer may write it afresh as if it were absent (never a dead end), and says so when it does; until
/// then it is left as it was (a merge refused for its shards keeps it).
class FileClaim {
 public:
  /// @param who the command, for the warning ("labrun sweep").
  /// @throws OutputError as require_regular_target() and OutputLock.
  FileClaim(const std::string& path, const std::string& who);

  /// True when the target existed, holding no record, when it was claimed.
  bool holds_no_result() const { return empty_; }
  /// holds_no_result(), and when true says on stderr "WHO: PATH holds no results (...); writing it afresh": for the
  /// writer to call as it replaces the target, so that the replacement is allowed (`replace` of
  /// write_beside_then_rename()).
  bool replace_empty() const;
  /// replace_empty(), removing the target when it is true: for a writer that creates its file anew (O_EXCL).
  /// @throws OutputError when the file cannot be removed.
  void remove_if_empty() const;

 private:
  OutputLock lock_;
  std::string path_, who_;
  bool empty_ = false;
};

/// Writes `path` whole or not at all: `write(sibling)` writes the beside-file PATH.new-PID, which is then renamed
/// over `path`. Without `replace` an existing `path` is refused. The sibling is removed on any failure.
/// @throws OutputError when `path` is not a regular file (nothing touched), exists without `replace`, or the rename
///   fails (with strerror); and whatever `write` throws.
void write_beside_then_rename(const std::string& path, bool replace,
                              const std::function<void(const std::string& sibling)>& write);

/// write_beside_then_rename() of `text`, written with write(2) and fsync'ed, replacing any existing regular file.
/// @throws OutputError "cannot write PATH: REASON" on any failure (the sibling removed).
void write_text_whole(const std::string& path, const std::string& text);

/// One file of write_texts_whole(): its path, its text, and whether an existing file there may be replaced.
struct TextFile {
  std::string path, text;
  bool replace = false;
};

/// Writes `files` whole or not at all, together: every target is checked first (require_regular_target(); one that
/// exists without `replace` is refused, and nothing is written), then each text is written beside its target
/// (PATH.new-PID, created with permissions `mode` less the umask, fsync'ed), and only when all were written whole are
/// they renamed into place, in order. On a failure every beside-file is removed and no target was touched (a failed
/// rename, after the writes, can leave the targets renamed before it).
/// @throws OutputError "output file PATH exists; labrun never overwrites ... (use --force)", "cannot write PATH:
///   REASON", "cannot rename ...".
void write_texts_whole(const std::vector<TextFile>& files, mode_t mode = 0644);

/// Writes `text` to the new file `path` (in a folder being made, e.g. a report's staging folder) with write(2).
/// @throws OutputError "cannot write PATH: REASON" on any failure.
void write_text_file(const std::filesystem::path& path, const std::string& text);

/// Opens `path` for writing (truncating it), errno cleared first so that a failure's reason is its own.
/// @throws OutputError "cannot write PATH: REASON".
std::ofstream open_for_write(const std::filesystem::path& path);

/// Closes `f` (flushing it) and checks that every write reached the kernel.
/// @throws OutputError "cannot write PATH: REASON" (strerror of the failed write, e.g. "No space left on device").
void close_or_throw(std::ofstream& f, const std::filesystem::path& path);

/// A report folder (report -o DIR, history -o DIR) claimed for one writer, made beside DIR and moved in. DIR must
/// be absent, an empty folder, or a folder holding an earlier report of the same kind (its marker `.labrun-KIND`,
/// or its main file `KIND.md`), which only `replace` (--force) replaces; anything else is refused.
class ReportFolder {
 public:
  /// Checks DIR, takes its lock (DIR.lock beside it) and removes stale staging folders of writers that died.
  /// @param kind "report" or "history".
  /// @throws OutputError (exit 4): DIR is not a folder ("… is a regular file, not a folder"), holds an earlier
  ///   report and `replace` is false ("… already holds a report; labrun never overwrites results (use --force)"),
  ///   holds other files, or is being written by another labrun.
  ReportFolder(const std::string& dir, const std::string& kind, bool replace);
  /// Removes the staging folder unless commit() moved it in.
  ~ReportFolder();
  ReportFolder(const ReportFolder&) = delete;
  ReportFolder& operator=(const ReportFolder&) = delete;

  /// Creates the empty staging folder DIR.new-PID and returns it: the report is written there.
  /// @throws OutputError "cannot create directory …: REASON".
  const std::filesystem::path& begin();
  /// Writes the marker into the staging folder and moves its files into DIR (each a rename: every file is the old
  /// one or the new one); with `replace`, .png files of the old report that this one did not make are removed.
  /// @throws OutputError "cannot move … into …: REASON".
  void commit();

 private:
  std::filesystem::path dir_, staging_;
  std::string kind_;
  bool replace_;
  std::optional<OutputLock> lock_;
};

}  // namespace labrun
