// Reading result files: the bounded line reader every reader of result files uses (RecordLines), the linear-time
// parse of one record line (parse_record_line) and read_jsonl. The bounds are documented in docs/records.md
// ("Bounds"); the writers are in record.cpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "format.hpp"       // printable
#include "output_file.hpp"  // describe_file_type
#include "record.hpp"

namespace labrun {

namespace {

/// Builds the ordered_json of one line from nlohmann's SAX events in time linear in the line. nlohmann's own DOM
/// builder inserts every key through ordered_map::operator[], a linear search of the keys so far: quadratic in an
/// object's width (80,000 keys took 11 s). Here a key is appended to the object's vector; duplicates are found by a
/// linear look among the first few keys and through a hash set beyond them.
class RecordBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return put(Json(v)); }
  bool string(string_t& v) { return put(Json(std::move(v))); }
  bool binary(binary_t& v) { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    stack_.push_back(Open{slot(Json::object()), nullptr, nullptr});
    return true;
  }
  bool key(string_t& k);
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    stack_.push_back(Open{slot(Json::array()), nullptr, nullptr});
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  /// As nlohmann's DOM parser: the lexer's or parser's exception (parse_error, out_of_range 406), its type kept.
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& ex) {
    throw ex;
  }

  Json root;

 private:
  // An array or object being filled; for an object, where the value of its last key goes and, once it is wider
  // than kLinearKeys, a set of its keys.
  struct Open {
    Json* value;
    Json* pending;
    std::unique_ptr<std::unordered_set<std::string>> keys;
  };
  static constexpr std::size_t kLinearKeys = 16;

  Json* slot(Json&& v);
  bool put(Json&& v) {
    slot(std::move(v));
    return true;
  }
  bool seen(Open& open, const Json::object_t& object, const std::string& k);

  std::vector<Open> stack_;
};

// Where a new value goes: the root, the end of the open array, or the open object's last key.
Json* RecordBuilder::slot(Json&& v) {
  if (stack_.empty()) {
    root = std::move(v);
    return &root;
  }
  Open& open = stack_.back();
  if (open.value->is_array()) {
    auto& array = open.value->get_ref<Json::array_t&>();
    array.push_back(std::move(v));
    return &array.back();
  }
  *open.pending = std::move(v);
  return open.pending;
}

bool RecordBuilder::seen(Open& open, const Json::object_t& object, const std::string& k) {
  if (!open.keys && object.size() < kLinearKeys) {
    for (const auto& item : object)
      if (item.first == k) return true;
    return false;
  }
  if (!open.keys) {
    open.keys = std::make_unique<std::unordered_set<std::string>>();
    open.keys->reserve(2 * kLinearKeys);
    for (const auto& item : object) open.keys->insert(item.first);
  }
  return !open.keys->insert(k).second;
}

bool RecordBuilder::key(string_t& k) {
  Open& open = stack_.back();
  auto& object = open.value->get_ref<Json::object_t&>();
  if (object.size() >= kMaxObjectKeys)
    throw ResultError("an object with more than " + std::to_string(kMaxObjectKeys) +
                      " keys (the one past the bound: \"" + k.substr(0, 60) +
                      "\"): not a labrun record (labrun writes well under 100 keys in an object)");
  if (seen(open, object, k))
    throw ResultError("key \"" + k.substr(0, 60) + "\" given twice in one object: not a labrun record");
  auto& items = static_cast<Json::object_t::Container&>(object);
  items.emplace_back(std::move(k), Json());
  open.pending = &items.back().second;
  return true;
}

// Refuses a line nested deeper than kMaxJsonDepth, counting brackets outside strings, before it is parsed.
void check_depth(const std::string& line) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ResultError("nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels: not a labrun record (labrun writes at most 5)");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string gib(std::uint64_t bytes) { return std::to_string(bytes >> 30) + " GiB"; }

}  // namespace

Json parse_record_line(const std::string& line) {
  check_depth(line);
  RecordBuilder builder;
  Json::sax_parse(line, &builder);
  return std::move(builder.root);
}

RecordLines::RecordLines(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO must not hang the open
  if (fd_ < 0) throw ResultError("cannot read " + printable(path) + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw ResultError("cannot read " + printable(path) + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw ResultError(path + ": " + describe_file_type(st.st_mode) +
                      ", not a regular file: labrun reads result files (JSON Lines written by labrun sweep) only");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > kMaxResultFileBytes) {
    ::close(fd_);
    throw ResultError(path + ": " + std::to_string(size_) + " bytes, more than the " + gib(kMaxResultFileBytes) +
                      " a result file may hold (docs/records.md, \"Bounds\"): is it the right file?");
  }
  block_.resize(std::size_t{1} << 20);
  unsigned char magic[6] = {0, 0, 0, 0, 0, 0};
  const ssize_t got = ::pread(fd_, magic, 6, 0);
  if (got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    ::close(fd_);
    throw ResultError(path + ": gzip-compressed: unpack it first (gunzip -k " + path + ")");
  }
  static constexpr unsigned char kXzMagic[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};  // xz file format 1.0.4, 2.1.1.1
  if (got == 6 && std::equal(magic, magic + 6, kXzMagic)) {
    ::close(fd_);
    throw ResultError(path + ": xz-compressed: unpack it first (xz -dk " + path + ")");
  }
}

RecordLines::~RecordLines() {
  if (fd_ >= 0) ::close(fd_);
}

bool RecordLines::fill() {
  pos_ = end_ = 0;
  if (eof_) return false;
  while (true) {
    const ssize_t n = ::read(fd_, block_.data(), block_.size());
    if (n < 0 && errno == EINTR) continue;  // a signal handler without SA_RESTART (src/base/interrupt.hpp)
    if (n < 0) throw ResultError("cannot read " + printable(path_) + ": " + std::strerror(errno));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ = static_cast<std::size_t>(n);
    read_ += static_cast<std::uint64_t>(n);
    if (read_ > kMaxResultFileBytes)
      throw ResultError(path_ + ": more than " + gib(kMaxResultFileBytes) +
                        " read (the file grew while it was read?); the most a result file may hold");
    return true;
  }
}

bool RecordLines::next(std::string& line) {
  line.clear();
  line_offset_ = next_offset_;
  bool any = false;
  while (true) {
    if (pos_ == end_ && !fill()) break;
    any = true;
    const char* start = block_.data() + pos_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    const std::size_t take = newline ? static_cast<std::size_t>(newline - start) : end_ - pos_;
    if (line.size() + take > kMaxRecordLineBytes)
      throw ResultError(path_ + ":" + std::to_string(line_number_ + 1) + ": a line longer than " +
                        std::to_string(kMaxRecordLineBytes) +
                        " bytes (64 MiB), the most a result line may hold "
                        "(docs/records.md, \"Bounds\"): not a labrun result file");
    line.append(start, take);
    pos_ += take + (newline ? 1 : 0);
    if (newline) {
      ++line_number_;
      next_offset_ = line_offset_ + line.size() + 1;
      unterminated_ = false;
      return true;
    }
  }
  if (!any || line.empty()) return false;
  ++line_number_;
  next_offset_ = line_offset_ + line.size();
  unterminated_ = true;
  return true;
}

std::vector<Json> read_jsonl(const std::string& path, bool* torn_tail) {
  RecordLines in(path);
  if (torn_tail) *torn_tail = false;
  std::vector<Json> out;
  std::string line;
  while (in.next(line)) {
    if (line.empty()) continue;
    try {
      out.push_back(parse_record_line(line));
    } catch (const std::exception& e) {
      // The last line without a newline: the record being written when the run was killed.
      if (in.unterminated()) {
        if (torn_tail) *torn_tail = true;
        break;
      }
      throw ResultError(path + ":" + std::to_string(in.line_number()) + ": not JSON: " + e.what());
    }
  }
  return out;
}

}  // namespace labrun
