#include "report_csv.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format.hpp"
#include "output_file.hpp"
#include "record.hpp"

namespace labrun {

namespace {

// A CSV field, quoted when it holds a comma, quote or newline (RFC 4180); control characters escaped (printable).
std::string csv_field(const std::string& text) {
  const std::string s = printable(text);
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_num(double x) { return std::isfinite(x) ? fmt::format("{}", x) : ""; }

Json opt(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

}  // namespace

void write_points_csv(const ReportContext& c, const std::filesystem::path& file) {
  std::vector<std::string> axes;
  for (const auto& run : c.runs())
    for (const auto& p : run.points)
      if (p.axes.is_object())
        for (const auto& [k, v] : p.axes.items())
          if (std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
  std::ofstream f = open_for_write(file);
  f << "run,file,id,experiment,variant";
  for (const auto& a : axes) f << ',' << csv_field("axis." + a);  // an axis name is a result file's text too
  f << ",status,time_s,wall_time_s,device_time_s,ci95_low_time_s,ci95_high_time_s,submit_time_s,iteration_time_s,"
       "achieved_bandwidth_Bps,"
       "compulsory_bandwidth_Bps,flop_per_s,arithmetic_intensity_flop_per_byte,fraction_of_memory_ceiling,"
       "fraction_of_copy,fraction_of_read,fraction_of_compute_ceiling,fraction_of_roofline,launch_overhead_share,"
       "host_stall_share,host_syncs_per_iteration,bound,confidence,suspect,memory_ceiling_Bps,"
       "compute_ceiling_flop_per_s,bf16_gemm_flop_per_s\n";
  for (const auto& run : c.runs()) {
    const std::string file_name = csv_field(run.file_name());
    for (const auto& p : run.points) {
      const Interpretation& in = ReportContext::interpretation(p);
      // The median's CI: of the device timing where there is one, else of the wall timing.
      const OptionalSummary* ci = nullptr;
      if (p.timing) ci = p.timing->device ? &p.timing->device : &p.timing->wall;
      const double lo = ci && *ci ? (*ci)->ci95_low_time_s : NAN, hi = ci && *ci ? (*ci)->ci95_high_time_s : NAN;
      f << run.number << ',' << file_name << ',' << csv_field(p.id) << ',' << csv_field(p.experiment) << ','
        << csv_field(p.variant);
      for (const auto& a : axes) {
        const auto v = p.axes.is_object() ? p.axes.find(a) : p.axes.end();
        f << ',' << (v != p.axes.end() ? csv_field(v->is_string() ? v->get<std::string>() : v->dump()) : std::string());
      }
      f << ',' << csv_field(to_string(p.status));
      for (double x : {in.time_s, in.wall_time_s, in.device_time_s, lo, hi, in.submit_time_s, in.iteration_time_s,
                       in.achieved_bandwidth_Bps, in.compulsory_bandwidth_Bps, in.flop_per_s,
                       in.arithmetic_intensity_flop_per_byte, in.fraction_of.memory_ceiling, in.fraction_of.copy,
                       in.fraction_of.read, in.fraction_of.compute_ceiling, in.fraction_of.roofline,
                       in.launch_overhead_share, in.host_stall_share, in.host_syncs_per_iteration})
        f << ',' << csv_num(x);
      f << ',' << csv_field(in.bound) << ',' << csv_field(in.confidence.value_or("")) << ','
        << (in.suspect ? "true" : "false");
      for (double x :
           {in.ceilings.memory_bandwidth_Bps, in.ceilings.compute_flop_per_s, in.ceilings.bf16_gemm_flop_per_s})
        f << ',' << csv_num(x);
      f << '\n';
    }
  }
  close_or_throw(f, file);
}

void write_ceilings_json(const ReportContext& c, const std::filesystem::path& file) {
  Json runs = Json::array();
  for (const auto& run : c.runs()) {
    const RunHeader& h = run.header;
    const double copy = h.calibration("copy", "bandwidth_Bps");
    const double read = h.calibration("read", "bandwidth_Bps");
    runs.push_back(Json{{"run", run.number},
                        {"file", run.file_name()},
                        {"experiment", h.experiment()},
                        {"device", h.device_name()},
                        {"memory_bandwidth_Bps", opt(ReportContext::memory_ceiling_Bps(h))},
                        {"memory_source", ReportContext::memory_ceiling_source(h)},
                        {"copy_bandwidth_Bps", opt(copy)},
                        {"read_bandwidth_Bps", opt(read)},
                        {"theoretical_bandwidth_Bps", opt(h.theoretical_bandwidth_Bps())},
                        {"compute_flop_per_s", opt(ReportContext::compute_ceiling_flop_per_s(h))},
                        {"bf16_gemm_flop_per_s", opt(h.calibration("bf16_gemm", "flop_per_s"))}});
  }
  std::ofstream f = open_for_write(file);
  f << Json{{"runs", runs}}.dump(2) << '\n';
  close_or_throw(f, file);
}

}  // namespace labrun
