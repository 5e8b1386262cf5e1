// `labrun report`'s machine-readable outputs: points.csv (one row per point) and ceilings.json (each run's
// calibrated ceilings, for the roofline plot). Both are read by scripts/plot_report.py.
#pragma once

#include <filesystem>

#include "report_context.hpp"

namespace labrun {

/// Writes points.csv: a header row, then one row per point of every run in order (RFC 4180 quoting):
/// run, file, id, experiment, variant, axis.<name> for every axis any point has (first-seen order; words as
/// written, numbers as JSON writes them), status, then from the point's interpretation time_s, wall_time_s,
/// device_time_s, the median's ci95_low_time_s and ci95_high_time_s (device timing, else wall), submit_time_s,
/// iteration_time_s, achieved_bandwidth_Bps, compulsory_bandwidth_Bps, flop_per_s,
/// arithmetic_intensity_flop_per_byte, fraction_of_{memory_ceiling, copy, read, compute_ceiling, roofline},
/// launch_overhead_share, host_stall_share, host_syncs_per_iteration, bound, confidence, suspect (true|false),
/// and the ceilings memory_ceiling_Bps, compute_ceiling_flop_per_s, bf16_gemm_flop_per_s. SI units; a
/// missing or non-finite number is an empty field. @throws OutputError when the file cannot be written.
void write_points_csv(const ReportContext& context, const std::filesystem::path& file);

/// Writes ceilings.json: {"runs": [{run, file, experiment, device, memory_bandwidth_Bps (max of copy and
/// read), memory_source ("read" or "copy"), copy_bandwidth_Bps, read_bandwidth_Bps, theoretical_bandwidth_Bps,
/// compute_flop_per_s (FP32 FMA), bf16_gemm_flop_per_s}]} from each run's header calibration (B/s, FLOP/s;
/// null when not calibrated). @throws OutputError when the file cannot be written.
void write_ceilings_json(const ReportContext& context, const std::filesystem::path& file);

}  // namespace labrun
