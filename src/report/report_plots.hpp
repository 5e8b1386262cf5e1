// `labrun report`'s plots: which figures a run gets (from its experiment's ExperimentDef::plots, or time against
// its size axis), written as plots.json, and the run of scripts/plot_report.py that draws them (with a
// roofline per run) as PNGs beside it. The script hard-codes no axis: it draws what plots.json says.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "report_context.hpp"

namespace labrun {

/// One figure of median time per loop iteration (points.csv iteration_time_s, log scale) of one run's ok, not
/// suspect points, as the plotting script draws it.
struct PlotFigure {
  std::size_t run = 0;              ///< ReportRun::number
  std::string experiment;           ///< the run's experiment name ("" if unknown)
  std::string x;                    ///< the numeric axis on the horizontal
  std::string x_scale = "linear";   ///< "log" when every x value is positive and they span >= 16× (2^10..2^14)
  std::string series = "variant";   ///< one line (colour) per value of this: "variant" or an axis
  std::vector<std::string> facets;  ///< one panel per combination of these axes' values (only varying ones)
  /// One line style per value of this axis ("" for none): of the varying axes the figure does not use
  /// otherwise, the first numeric one with at most 4 values, else the first with at most 4 values.
  std::string style;
  /// One figure per combination of these (the remaining varying axes; "variant" when series is an axis).
  std::vector<std::string> split;
  std::string title;  ///< "<experiment>: <ExperimentDef::Plot::title or 'time vs <x>'>"
  std::string name;   ///< file name stem, unique per run: "time_vs_<x>_run<R>[_<k>]"
};

/// The figures of every run, in run order. A run whose experiment declares ExperimentDef::plots gets one figure
/// per ExperimentDef::Plot whose x varies in the run; any other run (no experiment, or none declared) gets time against
/// its size axis (ReportRun::size_axis) when that varies, split by the other varying axes; else none.
std::vector<PlotFigure> plot_figures(const ReportContext& context);

/// Writes plots.json for the plotting script: {"points": "points.csv", "ceilings": "ceilings.json",
/// "figures": [PlotFigure as an object with the same field names], "roofline": {"marker": kModeAxis},
/// "hypotheses": [{run, number, faster, than, by_at_least, verdict, x (the run's size axis), points: [{axes, ratio,
/// passed}]}] (the speedup plot), "winners": [{run, experiment, cols, rows (two varying axes), groups: [{axes, winner,
/// margin_ratio, significant}]}] (the winner heatmap)}. The
/// script adds "drawn": [{file, title}], the PNGs it wrote. `max_time_plots` (also written) caps the time figures the
/// script draws (each figure of `figures` is one PNG per combination of its split axes, so a result with a replica
/// or seed axis asks for hundreds); the script writes "not_drawn", the count it left out. 0: no cap.
/// @throws OutputError when it cannot be written.
void write_plot_specs(const ReportContext& context, const std::filesystem::path& file, std::size_t max_time_plots);

/// Runs the plotting script on `out_dir` (which holds points.csv, ceilings.json and plots.json): `script`,
/// or, when empty, scripts/plot_report.py from the working directory, then from the folders above the
/// running executable; with the first python3 that has matplotlib (on PATH, then /usr/bin/python3). Returns
/// the plots drawn ([{file, title}], files that exist in out_dir), or an empty array after a warning on `err`
/// (script or matplotlib missing, the script failed: its output is left in out_dir/plot.log). `not_drawn`, when
/// given, receives the count of time figures the script left out for the cap. Never throws.
Json draw_plots(const std::filesystem::path& out_dir, const std::string& script, std::ostream& err,
                std::size_t* not_drawn = nullptr);

}  // namespace labrun
