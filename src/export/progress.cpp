// A sweep's progress lines on the console (ProgressSink, console.hpp).
#include "console.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include <labrun/status.hpp>

#include "format.hpp"
#include "log.hpp"

namespace labrun {

using console_text::fmt_time;
using console_text::short_axes;

void ProgressSink::point(std::size_t i, const PointRecord& rec) {
  const bool ran = rec.status != Status::not_supported && rec.status != Status::skipped;
  not_run_ += !ran;
  if (quiet_ || !ran) return;
  std::string t = rec.timing ? fmt_time(rec.timing->time_s) : "";
  std::string reason = rec.reason.value_or("");
  if (reason.size() > 100) reason = reason.substr(0, 100) + "...";
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double eta_s = elapsed_s / static_cast<double>(i) * static_cast<double>(numbers_.todo - i);
  const std::string line = fmt::format("[{}/{}] {} elapsed, ETA {}{} {:<20} {:<40} {:<19} {} {}", numbers_.before + i,
                                       numbers_.total, format_duration(elapsed_s), format_duration(eta_s),
                                       not_run_ > 0 ? fmt::format(" ({} not run)", not_run_) : std::string(),
                                       rec.variant, short_axes(rec.axes), to_string(rec.status), t, reason);
  if (stderr_is_terminal()) std::cerr << line << "\n";  // on a terminal
  else spdlog::info("{}", line);                        // timestamped in a batch log
}

void ProgressSink::finish() {
  if (!quiet_ && not_run_ > 0)
    spdlog::info("{} of {} points not run (not supported or skipped; in the file with the reason)", not_run_,
                 numbers_.todo);
}

}  // namespace labrun
