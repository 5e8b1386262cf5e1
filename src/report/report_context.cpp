#include "report_context.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "lab_axes.hpp"
#include "record.hpp"
#include "stats.hpp"

namespace labrun {

namespace {

// The varying numeric axis whose positive values span the largest ratio, if at least 100×; "" otherwise.
std::string inferred_size_axis(const ReportRun& run) {
  std::string best;
  double best_ratio = 100;
  for (const auto& axis : run.varying) {
    double lo = INFINITY, hi = 0;
    bool numeric = true;
    for (const auto& p : run.points) {
      const auto it = p.axes.find(axis);
      if (it == p.axes.end()) continue;
      if (!it->is_number()) {
        numeric = false;
        break;
      }
      const double x = p.axis_number(axis);
      if (!(x > 0)) {
        numeric = false;
        break;
      }
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    if (numeric && hi > 0 && hi / lo >= best_ratio) {
      best_ratio = hi / lo;
      best = axis;
    }
  }
  return best;
}

}  // namespace

std::string ReportRun::experiment_name() const {
  const std::string e = header.experiment();
  if (!e.empty() || points.empty()) return e;
  return points.front().experiment;
}

std::string ReportRun::file_name() const { return std::filesystem::path(file).filename().string(); }

ReportContext::ReportContext(ResultSet results, const Registry* registry)
    : warnings_(std::move(results.warnings)), registry_(registry) {
  for (auto& run : results.runs)
    for (auto& p : run.points)
      if (!p.interpretation) p.interpretation = interpret(p, run.header);
  analysis_ = analyze(results);
  runs_.reserve(results.runs.size());
  by_id_.resize(results.runs.size());
  for (std::size_t ri = 0; ri < results.runs.size(); ++ri) {
    Run& in = results.runs[ri];
    ReportRun run;
    run.number = ri;
    run.file = std::move(in.file);
    run.header = std::move(in.header);
    run.segments = std::move(in.segments);
    run.has_header = in.has_header;
    run.points = std::move(in.points);
    std::map<std::string, std::set<std::string>> seen;
    std::vector<std::string> order;
    bool all_host = !run.points.empty();
    for (std::size_t i = 0; i < run.points.size(); ++i) {
      const PointRecord& p = run.points[i];
      by_id_[ri][p.id] = i;
      if (std::find(run.variants.begin(), run.variants.end(), p.variant) == run.variants.end())
        run.variants.push_back(p.variant);
      if (p.axes.is_object())
        for (const auto& [k, v] : p.axes.items()) {
          if (!seen.count(k)) order.push_back(k);
          seen[k].insert(v.dump());
        }
      all_host = all_host && p.backend == "host";
    }
    for (const auto& k : order)
      if (seen[k].size() > 1) run.varying.push_back(k);
    const std::string backend = run.header.backend();
    run.host_backend = backend == "host" || (backend.empty() && all_host);
    run.experiment = registry ? registry->find(run.experiment_name()) : nullptr;
    run.size_axis = run.experiment ? run.experiment->size_axis : inferred_size_axis(run);
    runs_.push_back(std::move(run));
  }
}

std::vector<const ReportRun*> ReportContext::runs_of(const std::string& experiment) const {
  std::vector<const ReportRun*> out;
  for (const auto& r : runs_)
    if (r.experiment_name() == experiment) out.push_back(&r);
  return out;
}

std::size_t ReportContext::point_count() const {
  std::size_t n = 0;
  for (const auto& r : runs_) n += r.points.size();
  return n;
}

namespace {

std::vector<const Json*> of_run(const Json& list, std::size_t run) {
  std::vector<const Json*> out;
  if (!list.is_array()) return out;
  for (const auto& x : list)
    if (x.is_object() && x.contains("run") && x["run"].is_number_integer() && x["run"].get<std::size_t>() == run)
      out.push_back(&x);
  return out;
}

}  // namespace

std::vector<const Json*> ReportContext::groups(std::size_t run) const {
  const auto it = analysis_.find("groups");
  return it == analysis_.end() ? std::vector<const Json*>{} : of_run(*it, run);
}

std::vector<const Json*> ReportContext::crossovers(std::size_t run) const {
  const auto it = analysis_.find("crossovers");
  return it == analysis_.end() ? std::vector<const Json*>{} : of_run(*it, run);
}

const PointRecord* ReportContext::find(std::size_t run, const std::string& id) const {
  if (run >= runs_.size()) return nullptr;
  const auto it = by_id_[run].find(id);
  return it == by_id_[run].end() ? nullptr : &runs_[run].points[it->second];
}

const PointRecord* ReportContext::find(std::size_t run, const Json& id) const {
  return id.is_string() ? find(run, id.get<std::string>()) : nullptr;
}

std::vector<const PointRecord*> ReportContext::representative_points(std::size_t ri) const {
  const ReportRun& run = runs_.at(ri);
  const std::string& size = run.size_axis;
  std::map<std::string, std::vector<double>> numeric;
  std::map<std::string, std::map<std::string, int>> words;
  for (const auto& p : run.points)
    if (p.axes.is_object())
      for (const auto& [k, v] : p.axes.items()) {
        if (v.is_number()) numeric[k].push_back(v.get<double>());
        else words[k][format_axis_value(v)]++;
      }
  std::map<std::string, double> middle;
  for (auto& [k, v] : numeric) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    middle[k] = v[(v.size() - 1) / 2];
  }
  std::map<std::string, std::string> common;
  for (const auto& [k, m] : words) {
    int best = -1;
    for (const auto& [w, n] : m)
      if (n > best) {
        best = n;
        common[k] = w;
      }
  }
  // Lower is more representative: steps from the middle of each numeric axis, 100 per uncommon word.
  auto score = [&](const PointRecord& p) {
    double s = 0;
    if (!p.axes.is_object()) return s;
    for (const auto& [k, v] : p.axes.items()) {
      if (k == kModeAxis) continue;
      if (v.is_number()) {
        if (k == size) continue;
        const auto& vals = numeric[k];
        const auto pos = std::lower_bound(vals.begin(), vals.end(), v.get<double>()) - vals.begin();
        const auto mid = std::lower_bound(vals.begin(), vals.end(), middle[k]) - vals.begin();
        s += std::abs(static_cast<double>(pos - mid));
      } else if (format_axis_value(v) != common[k]) {
        s += 100;
      }
    }
    return s;
  };
  std::map<std::string, const PointRecord*> pick;
  std::vector<std::string> order;
  for (const auto& p : run.points) {
    if (!usable(p)) continue;  // suspect points have a section of their own
    const std::string k = p.variant + "/" + p.axis_word(kModeAxis);
    if (!pick.count(k)) {
      pick[k] = &p;
      order.push_back(k);
      continue;
    }
    const PointRecord& cur = *pick[k];
    const double x = size.empty() ? NAN : p.axis_number(size), cx = size.empty() ? NAN : cur.axis_number(size);
    const bool larger = std::isfinite(x) && (!std::isfinite(cx) || x > cx);
    const bool same = x == cx || (!std::isfinite(x) && !std::isfinite(cx));
    if (larger || (same && score(p) < score(cur))) pick[k] = &p;
  }
  std::vector<const PointRecord*> out;
  for (const auto& k : order) out.push_back(pick[k]);
  return out;
}

std::string ReportContext::run_heading(std::size_t run) const {
  if (runs_.size() <= 1 || run >= runs_.size()) return "";
  return "### Run " + std::to_string(run) + " (" + code(runs_[run].file_name()) + ")\n\n";
}

std::string ReportContext::cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string ReportContext::code(const std::string& s) { return "`" + s + "`"; }

std::string ReportContext::device_text(const RunHeader& h) {
  if (!h.device().is_object()) return h.backend();
  std::string s = h.device_name();
  if (s.empty()) s = h.device_kind();
  if (!h.device_arch().empty()) s += ", " + h.device_arch();
  if (std::isfinite(h.sm_count())) s += fmt::format(", {:.0f} SMs", h.sm_count());
  if (std::isfinite(h.l2_bytes()) && h.l2_bytes() > 0) s += ", " + format_bytes(h.l2_bytes()) + " L2";
  if (!h.driver_version().empty()) s += ", driver " + h.driver_version();
  if (!h.runtime_version().empty()) s += ", CUDA runtime " + h.runtime_version();
  return s;
}

std::string ReportContext::build_text(const RunHeader& h) {
  if (const Json* tool = json_find(h.json, {"import", "tool"}); tool && tool->is_string()) {  // labrun import
    std::string code = h.code_sha();
    if (code.size() > 10) code = code.substr(0, 10);
    const std::optional<bool> dirty = h.code_dirty();
    return code.empty()
               ? "imported from " + tool->get<std::string>() + " (code under test not given: --code-rev)"
               : h.code_project() + " @ " + code + (dirty ? (*dirty ? " (dirty)" : " (clean)") : "") +
                     ", measured by " + tool->get<std::string>() + ", imported by labrun " + h.labrun_version();
  }
  if (!h.build().is_object()) return "not recorded";
  std::string sha = h.git_sha();
  if (sha.size() > 10) sha = sha.substr(0, 10);
  const std::optional<bool> dirty = h.git_dirty();
  std::string s = "labrun " + h.labrun_version() + (sha.empty() ? "" : " @ " + sha) +
                  (dirty ? (*dirty ? " (dirty)" : " (clean)") : "") + ", " + h.build_type() + ", " + h.cxx_compiler();
  const std::string cuda = h.cuda_compiler();
  if (!cuda.empty() && cuda != "-") s += ", " + cuda;
  // The code under test, when it is not labrun itself (a user's runner): its project and commit first.
  if (h.code_project() != "labrun") {
    std::string code = h.code_sha();
    if (code.size() > 10) code = code.substr(0, 10);
    const std::optional<bool> code_dirty = h.code_dirty();
    s = h.code_project() + " @ " + (code.empty() ? "unknown" : code) +
        (code_dirty ? (*code_dirty ? " (dirty)" : " (clean)") : "") + ", measured by " + s;
  }
  return s;
}

std::string ReportContext::calibration_text(const RunHeader& h) {
  if (!h.calibration_json().is_object()) return "none";
  const double read = h.calibration("read", "bandwidth_Bps"), copy = h.calibration("copy", "bandwidth_Bps");
  if (!std::isfinite(read) && !std::isfinite(copy)) {
    const std::string b = h.calibration_backend();
    return "no ceilings" + (b.empty() ? std::string() : " (backend " + b + ")") + ": bounds cannot be classified";
  }
  std::vector<std::string> parts;
  auto add = [&](const std::string& label, double v, const std::string& unit) {
    if (std::isfinite(v)) parts.push_back(label + " " + format_rate(v, unit));
  };
  add("read", read, "B/s");
  add("copy", copy, "B/s");
  add("theoretical", h.theoretical_bandwidth_Bps(), "B/s");
  add("FP32 FMA", h.calibration("fp32_fma", "flop_per_s"), "FLOP/s");
  add("bf16 GEMM", h.calibration("bf16_gemm", "flop_per_s"), "FLOP/s");
  const double le = h.calibration("launch", "eager_time_s"), lg = h.calibration("launch", "graph_time_s");
  if (std::isfinite(le) || std::isfinite(lg))
    parts.push_back("launch " + format_time(le) + " eager, " + format_time(lg) + " from a graph");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : " · ") + p;
  return s;
}

double ReportContext::memory_ceiling_Bps(const RunHeader& h) {
  return std::fmax(h.calibration("copy", "bandwidth_Bps"), h.calibration("read", "bandwidth_Bps"));
}

std::string ReportContext::memory_ceiling_source(const RunHeader& h) {
  const double copy = h.calibration("copy", "bandwidth_Bps"), read = h.calibration("read", "bandwidth_Bps");
  return std::isfinite(read) && !(copy > read) ? "read" : "copy";
}

double ReportContext::compute_ceiling_flop_per_s(const RunHeader& h) { return h.calibration("fp32_fma", "flop_per_s"); }

std::string ReportContext::ratio_text(double r) { return std::isfinite(r) ? fmt::format("{:.2f}×", r) : "n/a"; }

std::string ReportContext::counts_text(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [k, n] : v) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, k);
  return s.empty() ? "none" : s;
}

double ReportContext::median(std::vector<double> v) { return v.empty() ? NAN : summarize(std::move(v)).median; }

const Interpretation& ReportContext::interpretation(const PointRecord& p) {
  static const Interpretation none;
  return p.interpretation ? *p.interpretation : none;
}

IterationTime ReportContext::iteration_time(const PointRecord& p) {
  if (!p.timing) return IterationTime{NAN, NAN, NAN, false};
  const Timing& t = *p.timing;
  const double gpu = t.time_s;
  const double submit = t.submit ? t.submit->median_time_s : NAN;
  const bool blocked = t.method == TimingMethod::cuda_events_blocked;
  const bool host_paced = blocked && std::isfinite(submit) && std::isfinite(gpu) && submit > gpu;
  const OptionalSummary& s = host_paced ? t.submit : t.device ? t.device : t.wall;
  return IterationTime{host_paced ? submit : gpu, s ? s->ci95_low_time_s : NAN, s ? s->ci95_high_time_s : NAN,
                       host_paced};
}

bool ReportContext::usable(const PointRecord& p) { return p.status == Status::ok && !interpretation(p).suspect; }

}  // namespace labrun
