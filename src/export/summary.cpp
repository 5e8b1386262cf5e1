// A sweep's summary table on the console (SummarySink, console.hpp).
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

namespace {

using console_text::fmt_time;
using console_text::short_axes;

// `text` padded on the left to `width` terminal columns (µ is two bytes but one column).
std::string right_aligned(const std::string& text, std::size_t width) {
  const std::size_t columns = display_width(text);
  return std::string(width > columns ? width - columns : 0, ' ') + text;
}

bool shows_row(Status status) { return status == Status::ok || is_failure(status); }

}  // namespace

void SummarySink::point(std::size_t, const PointRecord& r) {
  ++points_;
  const std::string status = to_string(r.status);
  counts_[status]++;
  if (shows_row(r.status)) {
    Row row{printable(r.variant), printable(status), "-", "-", "-", "-", "-", short_axes(r.axes), std::nullopt};
    if (r.timing) {
      row.time = fmt_time(r.timing->time_s);
      row.wall = fmt_time(r.timing->wall ? r.timing->wall->median_time_s : std::nan(""));
      row.syncs = fmt::format("{:.2f}", r.timing->host_syncs_per_iteration);
    }
    if (r.interpretation) {
      const Interpretation& in = *r.interpretation;
      if (std::isfinite(in.achieved_bandwidth_Bps))
        row.bandwidth = fmt::format("{:.1f}", in.achieved_bandwidth_Bps / 1e9);
      row.bound = in.suspect ? "SUSPECT" : in.bound.empty() ? "-" : in.bound;
    }
    if (r.status != Status::ok && r.reason) row.reason = printable(*r.reason);
    rows_.push_back(std::move(row));
  } else {
    // One line per kind of reason: the part before "; this point" (the limit, not each point's own size).
    const std::string reason = r.reason.value_or("");
    not_run_[status + ": " + reason.substr(0, std::min<std::size_t>(reason.find("; this point"), 110))]++;
  }
  // Where the sweep's time went: each phase summed over the points (and over the processes of a pooled record).
  if (!r.phases.is_object()) return;
  for (const auto& item : r.phases.items()) {
    const std::string& name = item.key();  // not a structured binding: a lambda may not capture one (C++17)
    const Json& phase = item.value();
    if (!phase.is_object() || !phase.contains("time_s") || !phase["time_s"].is_number()) continue;
    auto it = std::find_if(phase_s_.begin(), phase_s_.end(), [&](const auto& p) { return p.first == name; });
    if (it == phase_s_.end()) it = phase_s_.insert(phase_s_.end(), {name, 0.0});
    it->second += phase["time_s"].get<double>();
  }
}

void SummarySink::finish() {
  std::printf("\n%-20s %-12s %11s %11s %9s %8s %-8s %s\n", "variant", "status", "time", "wall", "GB/s", "syncs/it",
              "bound", "axes");
  for (const Row& row : rows_) {
    std::printf("%-20s %-12s %s %s %9s %8s %-8s %s\n", row.variant.c_str(), row.status.c_str(),
                right_aligned(row.time, 11).c_str(), right_aligned(row.wall, 11).c_str(), row.bandwidth.c_str(),
                row.syncs.c_str(), row.bound.c_str(), row.axes.c_str());
    if (row.reason) std::printf("    %s\n", row.reason->c_str());
  }
  for (const auto& [why, n] : not_run_) std::printf("%6d x %s\n", n, why.c_str());
  if (!phase_s_.empty()) {
    std::string where;
    for (const auto& [name, s] : phase_s_) where += fmt::format("{}{} {:.1f} s", where.empty() ? "" : ", ", name, s);
    std::printf("\ntime in phases (summed over points and processes): %s; sweep wall time %.1f s\n", where.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  }
  std::string line;
  for (const auto& [s, c] : counts_) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", c, s);
  std::printf("\n%zu points: %s\n", points_, line.c_str());
}

}  // namespace labrun
