// JSON Lines records: the number encoding (case C14) and an append-only writer that never loses a line.
// Schema of header and point lines: docs/records.md.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace labrun {

using Json = nlohmann::ordered_json;

/// Version of the record schema, written in every header as `schema_version`: 3 since environment.code (the code
/// under test, src/base/code_rev.hpp); files of 1 and 2 load everywhere (docs/records.md).
inline constexpr int kRecordSchemaVersion = 3;

/// A real number as JSON. Finite values are JSON numbers (nlohmann writes the shortest text that reads back
/// exactly). JSON has no NaN or infinity, so those become the strings "NaN", "Infinity" and "-Infinity"
/// (the spellings of JavaScript and of Python's json module): lossless, and never `null`. Case C14.
Json json_real(double value);

/// A JSON array of json_real(v) for each of `values`, in order.
Json json_reals(const std::vector<double>& values);

/// Reads a number written by json_real() (or any JSON number) back to a double.
/// @throws std::invalid_argument for anything else (null, other strings, objects).
double real_from_json(const Json& value);

/// The value at `path` inside nested objects (e.g. {"timing", "device", "median_time_s"}), or nullptr when a
/// step is missing or not an object.
const Json* json_find(const Json& j, std::initializer_list<const char*> path);

/// The number at `path` (a JSON number or a json_real() string); NaN when missing, null, a boolean or not a
/// number. Never throws: for reading records whose fields may be absent.
double json_number(const Json& j, std::initializer_list<const char*> path);

/// Error opening an output file (exists and no --force, or cannot be created). main() maps it to kExitOutput.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Appends one JSON object per line to a file, holding an exclusive flock(2) on it while open (so another writer
/// under any name is refused, src/base/output_lock.hpp), each line handed to the kernel in one write(2) on an O_APPEND
/// descriptor and returned only when the kernel has all of it. A line whose write() returned is on disk whole,
/// whatever happens to the process afterwards; a kill during a write can leave that one line torn (the kernel
/// copies page by page), and only as the unterminated last line, which read_jsonl() recognises and drops.
class JsonlWriter {
 public:
  /// Creates `path` (and its parent directories). Without `force`, an existing file is an OutputError and is
  /// left untouched (opened with O_EXCL). With `force` an existing file is kept until the new one holds its
  /// header and a first record after it: the lines go to PATH.new-PID, renamed over PATH at the second line, so a
  /// run that fails before its first point never costs the old results (the sibling is removed). A `path` that
  /// exists and is not a regular file is an OutputError (require_regular_target, src/base/output_file.hpp).
  JsonlWriter(const std::string& path, bool force);
  /// Selects the appending constructor.
  struct Append {};
  /// Appends to the existing file `path` (a run being resumed, or a worker's file its supervisor finishes),
  /// after dropping a torn last line (drop_torn_tail). @throws OutputError if it does not exist or cannot be
  /// opened for writing, or is not a regular file.
  JsonlWriter(const std::string& path, Append);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  /// Writes `record` as one line and returns when the kernel has it. @throws OutputError on a failed write.
  void write(const Json& record);
  /// Writes `line` (one record's JSON text, without its newline) as one line, as write() does.
  void write_line(const std::string& line);
  /// Renames a pending replacement over the path now, even before a second line (a file that is to hold a
  /// header alone, e.g. an empty shard). No-op otherwise. @throws OutputError if the rename fails.
  void commit();
  /// fsync(2): returns when the file's lines are on the storage device. @throws OutputError if it fails.
  void sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string pending_;  // the sibling being written until it replaces path_ (force onto an existing file)
  std::size_t lines_ = 0;
  int fd_ = -1;
};

/// Where JsonlWriter(path, force = true) of process `pid` writes until its first complete point replaces `path`.
std::string replacement_path(const std::string& path, long pid);

/// Makes `path` end with a newline so that appending starts on a line of its own: an unterminated last line that
/// parses as a record (a copy that lost its final newline) gets the newline; one that does not (a record torn by a
/// killed writer) is truncated away. Returns the bytes dropped (0 if none).
/// @throws OutputError if the file cannot be read or truncated.
std::size_t drop_torn_tail(const std::string& path);

/// The deepest nesting a record line may have: labrun writes at most 5 levels; deeper input (a hostile or broken
/// file) is refused before parsing, whose recursion would otherwise overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

/// The most keys one JSON object of a record may hold: labrun writes well under 100 (a header's `lab` and
/// `environment` are the widest). A wider object is refused when its key one past the bound is read, so a line of a
/// million keys costs no more than reading this many (docs/records.md, "Bounds").
inline constexpr std::size_t kMaxObjectKeys = 100'000;

/// The longest line (one record, without its newline) a result file may hold: 64 MiB. labrun's longest lines are
/// a pooled header with the config's text (tens of KB) and points with raw samples (lab.max_samples of them, a few
/// hundred KB at most). A longer line is refused before more of it is read (docs/records.md, "Bounds").
inline constexpr std::size_t kMaxRecordLineBytes = std::size_t{64} << 20;

/// The largest result file a reader takes: 64 GiB, hundreds of times a 100,000-point sweep's file. Checked against
/// the file's size when it is opened and against the bytes read (a file that grows while it is read).
inline constexpr std::uint64_t kMaxResultFileBytes = std::uint64_t{64} << 30;

/// A result file that cannot be used: unreadable, not a regular file, over a bound, compressed, not JSON, a line
/// without "type", empty, or a record whose field has the wrong type or no sense. The message names the file and,
/// where there is one, the line ("results/a.jsonl:7: ..."); a record's own checks (*_from_json, check_header,
/// check_point of src/records/point_record.hpp) name the field instead and the loader adds file and line.
class ResultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses one line of a result file, in time linear in its length. Objects keep their keys in order; a key given
/// twice in one object is refused (nlohmann would keep the last value silently; a record never repeats a key).
/// @throws std::runtime_error "nested deeper than kMaxJsonDepth levels" when its arrays and objects (counted outside
/// strings) nest deeper, before any parsing; std::runtime_error naming the key for an object of more than
/// kMaxObjectKeys keys or a duplicate key; nlohmann's parse_error for anything that is not JSON, and nlohmann's
/// out_of_range (406, "number overflow parsing '1e400'") for a number beyond the range of a double (found by
/// fuzz/fuzz_results.cpp; the callers here catch std::exception).
Json parse_record_line(const std::string& line);

/// The lines of one result file, read in blocks with every bound of docs/records.md ("Bounds") checked before
/// the bytes past it are held: a regular file (not a character device such as /dev/zero, a FIFO or a folder), not
/// gzip-compressed, at most kMaxResultFileBytes, lines of at most kMaxRecordLineBytes. Memory: one block (1 MiB)
/// and the current line.
class RecordLines {
 public:
  /// Opens `path`. @throws ResultError "cannot read PATH: <errno text>", "PATH: a character device (or FIFO,
  /// socket, block device, folder), not a regular file: ...", "PATH: N bytes, more than the 64 GiB ...", or
  /// "PATH: gzip-compressed: unpack it first (gunzip -k PATH)" (and "xz-compressed ... (xz -dk PATH)").
  explicit RecordLines(const std::string& path);
  ~RecordLines();
  RecordLines(const RecordLines&) = delete;
  RecordLines& operator=(const RecordLines&) = delete;

  /// The next line, without its newline, into `line`; false at the end of the file. @throws ResultError
  /// "PATH:LINE: a line longer than 67108864 bytes (64 MiB) ..." before reading past the bound, "PATH: more than
  /// ... bytes" when the file grew past kMaxResultFileBytes, "cannot read PATH: ..." on a read error.
  bool next(std::string& line);
  /// The 1-based number of the line next() returned last.
  std::size_t line_number() const { return line_number_; }
  /// The byte offset in the file of that line's first byte.
  std::uint64_t offset() const { return line_offset_; }
  /// True when that line ended the file without a newline (the record a killed writer was writing, or a copy that
  /// lost its final newline).
  bool unterminated() const { return unterminated_; }
  /// The file's size in bytes when it was opened.
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  bool fill();  // reads the next block; false at end of file
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0, read_ = 0, line_offset_ = 0, next_offset_ = 0;
  std::size_t line_number_ = 0;
  bool unterminated_ = false, eof_ = false;
  std::vector<char> block_;
  std::size_t pos_ = 0, end_ = 0;
};

/// Reads every line of a JSONL file through RecordLines (its bounds). An unterminated, unparsable last line (a
/// record torn by a killed run) is dropped and reported through `torn_tail`. @throws ResultError naming the file and
/// line on any other bad JSON, and as RecordLines does.
std::vector<Json> read_jsonl(const std::string& path, bool* torn_tail = nullptr);

}  // namespace labrun
