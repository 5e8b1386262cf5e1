#include "log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <streambuf>
#include <utility>
#include <stdexcept>

#include <spdlog/sinks/ostream_sink.h>

#include "format.hpp"

namespace labrun {

namespace {

std::string g_level = "info";

/// The length of an incomplete UTF-8 sequence at the end of `text` (its lead byte and fewer continuation bytes
/// than the lead announces), or 0.
std::size_t incomplete_utf8_tail(const std::string& text) {
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: look further back for its lead
    const std::size_t need = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/// std::cerr's buffer once escape_standard_error() ran: what it is given, through printable(), to the buffer it
/// had before (stdio's stderr).
class EscapingBuffer : public std::streambuf {
 public:
  explicit EscapingBuffer(std::streambuf* target) : target_(target) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof()))
      return sync() == 0 ? traits_type::not_eof(c) : traits_type::eof();
    pending_ += traits_type::to_char_type(c);
    if (pending_.back() == '\n') write_out();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<std::size_t>(n));
    write_out();
    return n;
  }
  int sync() override {
    write_out();
    return target_->pubsync();
  }

 private:
  void write_out() {
    const std::size_t keep = incomplete_utf8_tail(pending_);
    if (pending_.size() == keep) return;
    const std::string shown = printable(pending_.substr(0, pending_.size() - keep), true);
    target_->sputn(shown.data(), static_cast<std::streamsize>(shown.size()));
    pending_.erase(0, pending_.size() - keep);
  }

  std::streambuf* target_;
  std::string pending_;
};

}  // namespace

void escape_standard_error() {
  // Never destroyed: std::cerr is flushed at exit, after static objects are gone.
  static EscapingBuffer* const buffer = new EscapingBuffer(std::cerr.rdbuf());
  if (std::cerr.rdbuf() != buffer) std::cerr.rdbuf(buffer);
}

void init_logging(const std::string& level) {
  static const std::pair<const char*, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  const auto it = std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return level == l.first; });
  if (it == std::end(kLevels))
    throw std::invalid_argument("--log-level: expected trace, debug, info, warn, error or off; got '" + level + "'");
  const spdlog::level::level_enum parsed = it->second;
  g_level = level;
  std::string who = "labrun";
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* job = std::getenv("SLURM_JOB_ID");
  if (array_job && task) who += std::string(" job ") + array_job + " task " + task;
  else if (job) who += std::string(" job ") + job;
  escape_standard_error();
  auto logger = std::make_shared<spdlog::logger>("labrun-" + std::to_string(::getpid()),
                                                 std::make_shared<spdlog::sinks::ostream_sink_st>(std::cerr, true));
  logger->set_pattern("[%Y-%m-%dT%H:%M:%S.%eZ] [" + who + "] [%l] %v", spdlog::pattern_time_type::utc);
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);  // every line reaches the log at once: a killed job keeps them all
  spdlog::set_default_logger(logger);
}

const std::string& log_level() { return g_level; }

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace labrun
