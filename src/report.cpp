#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "interpret.hpp"
#include "stats.hpp"
#include "record.hpp"

namespace labrun {

namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A result file that is not what `labrun report` reads; the message names the file.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const Json* child(const Json& j, std::initializer_list<const char*> path) { return json_find(j, path); }
double num(const Json& j, std::initializer_list<const char*> path) { return json_number(j, path); }

std::string word(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = child(j, path);
  if (!p) return "";
  if (p->is_string()) return p->get<std::string>();
  if (p->is_number() || p->is_boolean()) return p->dump();
  return "";
}

bool positive(double x) { return std::isfinite(x) && x > 0; }

double median_of(std::vector<double> v) {
  return v.empty() ? kNaN : summarize(std::move(v)).median;
}

// A markdown table cell: pipes escaped, newlines flattened.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string code(const std::string& s) { return "`" + s + "`"; }

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string ratio_text(double r) { return std::isfinite(r) ? fmt::format("{:.2f}×", r) : "n/a"; }

// A CSV field, quoted when it holds a comma, quote or newline (RFC 4180).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_num(double x) { return std::isfinite(x) ? fmt::format("{}", x) : ""; }

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One input file's run: its header and its points (indices into the record list).
struct RunData {
  std::string file;
  Json header = Json::object();
  std::vector<std::size_t> points;
  std::vector<std::string> varying;  // axes with more than one value, in first-seen order
  std::vector<std::string> variants;  // in first-seen order
};

// The run's figures as one line each, for the summary table.
std::string device_text(const Json& h) {
  const Json* d = child(h, {"environment", "device"});
  if (!d || !d->is_object()) return word(h, {"environment", "backend"});
  std::string s = word(*d, {"name"});
  if (s.empty()) s = word(*d, {"kind"});
  const std::string arch = word(*d, {"arch"});
  if (!arch.empty()) s += ", " + arch;
  const double sms = num(*d, {"sm_count"});
  if (std::isfinite(sms)) s += fmt::format(", {:.0f} SMs", sms);
  const double l2 = num(*d, {"l2_bytes"});
  if (positive(l2)) s += ", " + format_bytes(l2) + " L2";
  const std::string drv = word(*d, {"driver_version"});
  if (!drv.empty()) s += ", driver " + drv;
  const std::string rt = word(*d, {"runtime_version"});
  if (!rt.empty()) s += ", CUDA runtime " + rt;
  return s;
}

std::string build_text(const Json& h) {
  const Json* l = child(h, {"environment", "labrun"});
  if (!l || !l->is_object()) return "not recorded";
  std::string sha = word(*l, {"git_sha"});
  if (sha.size() > 10) sha = sha.substr(0, 10);
  const Json* dirty = child(*l, {"git_dirty"});
  std::string s = "labrun " + word(*l, {"version"}) + (sha.empty() ? "" : " @ " + sha) +
                  (dirty && dirty->is_boolean() ? (dirty->get<bool>() ? " (dirty)" : " (clean)") : "") + ", " +
                  word(*l, {"build_type"}) + ", " + word(*l, {"cxx_compiler"});
  const std::string cuda = word(*l, {"cuda_compiler"});
  if (!cuda.empty() && cuda != "-") s += ", " + cuda;
  return s;
}

std::string calibration_text(const Json& h) {
  const Json* c = child(h, {"calibration"});
  if (!c || !c->is_object()) return "none";
  if (!child(*c, {"copy"}) && !child(*c, {"read"})) {
    const std::string b = word(*c, {"backend"});
    return "no ceilings" + (b.empty() ? std::string() : " (backend " + b + ")") + ": bounds cannot be classified";
  }
  std::vector<std::string> parts;
  auto add = [&](const std::string& label, double v, const std::string& unit) {
    if (std::isfinite(v)) parts.push_back(label + " " + format_rate(v, unit));
  };
  add("read", num(*c, {"read", "bandwidth_Bps"}), "B/s");
  add("copy", num(*c, {"copy", "bandwidth_Bps"}), "B/s");
  add("theoretical", num(h, {"environment", "device", "theoretical_bandwidth_Bps"}), "B/s");
  add("FP32 FMA", num(*c, {"fp32_fma", "flop_per_s"}), "FLOP/s");
  add("bf16 GEMM", num(*c, {"bf16_gemm", "flop_per_s"}), "FLOP/s");
  const double le = num(*c, {"launch", "eager_time_s"}), lg = num(*c, {"launch", "graph_time_s"});
  if (std::isfinite(le) || std::isfinite(lg))
    parts.push_back("launch " + format_time(le) + " eager, " + format_time(lg) + " from a graph");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : " · ") + p;
  return s;
}

std::string counts_text(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [k, n] : v) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, k);
  return s.empty() ? "none" : s;
}

// Everything the renderers share.
struct Context {
  std::vector<Json> records;                          // headers and points, interpretation attached
  std::vector<RunData> runs;                          // one per header, in order
  std::unordered_map<std::string, std::size_t> by_id;  // "run/id" → record index
  Json analysis;
};

std::string id_key(int run, const std::string& id) { return std::to_string(run) + "/" + id; }

const Json* record_by_id(const Context& c, int run, const Json& id) {
  if (!id.is_string()) return nullptr;
  auto it = c.by_id.find(id_key(run, id.get<std::string>()));
  return it == c.by_id.end() ? nullptr : &c.records[it->second];
}

// Reads the files; each file's points get that file's header (a file without one gets an empty header).
void load(const std::vector<std::string>& paths, Context& c, std::ostream& err) {
  for (const auto& path : paths) {
    std::vector<Json> lines;
    bool torn = false;
    try {
      lines = read_jsonl(path, &torn);
    } catch (const std::exception& e) {
      throw BadInput(std::string(e.what()).find(path) == std::string::npos ? path + ": " + e.what() : e.what());
    }
    if (lines.empty()) throw BadInput(path + ": no records (an empty file?)");
    RunData run;
    run.file = path;
    bool header_seen = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      Json& r = lines[i];
      if (!r.is_object() || !r.contains("type") || !r["type"].is_string())
        throw BadInput(path + ": record " + std::to_string(i + 1) + " is not a labrun record (no \"type\")");
      const std::string type = r["type"].get<std::string>();
      if (type == "header") {
        if (header_seen || !run.points.empty()) {  // a second run concatenated into the same file
          c.runs.push_back(run);
          run = RunData{};
          run.file = path;
        }
        header_seen = true;
        run.header = r;
        c.records.push_back(r);
      } else if (type == "point") {
        if (!header_seen && run.points.empty()) c.records.push_back(Json{{"type", "header"}});
        c.records.push_back(r);
        run.points.push_back(c.records.size() - 1);
      }
    }
    if (run.points.empty() && !header_seen) throw BadInput(path + ": no header and no point records");
    c.runs.push_back(run);
    if (torn) err << "labrun report: warning: " << path << ": the last line was torn (a killed run) and is ignored\n";
  }
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    RunData& run = c.runs[ri];
    std::map<std::string, std::set<std::string>> seen;
    std::vector<std::string> order;
    for (std::size_t i : run.points) {
      Json& r = c.records[i];
      r["interpretation"] = interpret_point(r, run.header);
      c.by_id[id_key(static_cast<int>(ri), word(r, {"id"}))] = i;
      const std::string v = word(r, {"variant"});
      if (std::find(run.variants.begin(), run.variants.end(), v) == run.variants.end()) run.variants.push_back(v);
      if (const Json* ax = child(r, {"axes"}); ax && ax->is_object())
        for (const auto& [k, val] : ax->items()) {
          if (!seen.count(k)) order.push_back(k);
          seen[k].insert(val.dump());
        }
    }
    for (const auto& k : order)
      if (seen[k].size() > 1) run.varying.push_back(k);
  }
  c.analysis = analyze(c.records);
}

// ---- points.csv and ceilings.json -----------------------------------------------------------------------

void write_csv(const Context& c, const fs::path& file) {
  std::vector<std::string> axes;
  for (const auto& run : c.runs)
    for (std::size_t i : run.points)
      if (const Json* ax = child(c.records[i], {"axes"}); ax && ax->is_object())
        for (const auto& [k, v] : ax->items())
          if (std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
  std::ofstream f(file);
  if (!f) throw OutputError("cannot write " + file.string());
  f << "run,file,id,experiment,variant";
  for (const auto& a : axes) f << ",axis." << a;
  f << ",status,time_s,wall_time_s,device_time_s,ci95_low_time_s,ci95_high_time_s,submit_time_s,iteration_time_s,"
       "achieved_bandwidth_Bps,"
       "compulsory_bandwidth_Bps,flop_per_s,arithmetic_intensity_flop_per_byte,fraction_of_memory_ceiling,"
       "fraction_of_copy,fraction_of_read,fraction_of_compute_ceiling,fraction_of_roofline,launch_overhead_share,"
       "host_stall_share,host_syncs_per_iteration,bound,confidence,suspect,memory_ceiling_Bps,"
       "compute_ceiling_flop_per_s,bf16_gemm_flop_per_s\n";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const RunData& run = c.runs[ri];
    for (std::size_t i : run.points) {
      const Json& r = c.records[i];
      const Json& in = r["interpretation"];
      const bool dev = child(r, {"timing", "device"}) && (*child(r, {"timing", "device"})).is_object();
      const char* src = dev ? "device" : "wall";
      f << ri << ',' << csv_field(fs::path(run.file).filename().string()) << ',' << csv_field(word(r, {"id"}))
        << ',' << csv_field(word(r, {"experiment"})) << ',' << csv_field(word(r, {"variant"}));
      for (const auto& a : axes) {
        const Json* v = child(r, {"axes", a.c_str()});
        f << ',' << (v ? csv_field(v->is_string() ? v->get<std::string>() : v->dump()) : std::string());
      }
      f << ',' << csv_field(word(r, {"status"}));
      for (double x : {num(in, {"time_s"}), num(in, {"wall_time_s"}), num(in, {"device_time_s"}),
                       num(r, {"timing", src, "ci95_low_time_s"}), num(r, {"timing", src, "ci95_high_time_s"}),
                       num(in, {"submit_time_s"}), num(in, {"iteration_time_s"}), num(in, {"achieved_bandwidth_Bps"}), num(in, {"compulsory_bandwidth_Bps"}),
                       num(in, {"flop_per_s"}), num(in, {"arithmetic_intensity_flop_per_byte"}),
                       num(in, {"fraction_of", "memory_ceiling"}), num(in, {"fraction_of", "copy"}),
                       num(in, {"fraction_of", "read"}), num(in, {"fraction_of", "compute_ceiling"}),
                       num(in, {"fraction_of", "roofline"}), num(in, {"launch_overhead_share"}),
                       num(in, {"host_stall_share"}), num(in, {"host_syncs_per_iteration"})})
        f << ',' << csv_num(x);
      f << ',' << word(in, {"bound"}) << ',' << word(in, {"confidence"}) << ','
        << (in.value("suspect", false) ? "true" : "false");
      for (double x : {num(in, {"ceilings", "memory_bandwidth_Bps"}), num(in, {"ceilings", "compute_flop_per_s"}),
                       num(in, {"ceilings", "bf16_gemm_flop_per_s"})})
        f << ',' << csv_num(x);
      f << '\n';
    }
  }
  if (!f) throw OutputError("cannot write " + file.string());
}

void write_ceilings(const Context& c, const fs::path& file) {
  Json runs = Json::array();
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const Json& h = c.runs[ri].header;
    auto opt = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
    const double copy = num(h, {"calibration", "copy", "bandwidth_Bps"});
    const double read = num(h, {"calibration", "read", "bandwidth_Bps"});
    runs.push_back(Json{{"run", ri},
                        {"file", fs::path(c.runs[ri].file).filename().string()},
                        {"experiment", word(h, {"config", "experiment"})},
                        {"device", word(h, {"environment", "device", "name"})},
                        {"memory_bandwidth_Bps", opt(std::fmax(copy, read))},
                        {"memory_source", std::isfinite(read) && !(copy > read) ? "read" : "copy"},
                        {"copy_bandwidth_Bps", opt(copy)},
                        {"read_bandwidth_Bps", opt(read)},
                        {"theoretical_bandwidth_Bps", opt(num(h, {"environment", "device", "theoretical_bandwidth_Bps"}))},
                        {"compute_flop_per_s", opt(num(h, {"calibration", "fp32_fma", "flop_per_s"}))},
                        {"bf16_gemm_flop_per_s", opt(num(h, {"calibration", "bf16_gemm", "flop_per_s"}))}});
  }
  std::ofstream f(file);
  f << Json{{"runs", runs}}.dump(2) << '\n';
  if (!f) throw OutputError("cannot write " + file.string());
}

// ---- plots ---------------------------------------------------------------------------------------------

std::string find_plot_script(const ReportOptions& o) {
  if (!o.plot_script.empty()) return fs::exists(o.plot_script) ? o.plot_script : "";
  std::vector<fs::path> candidates = {fs::current_path() / "scripts" / "plot_report.py"};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
      candidates.push_back(d / "scripts" / "plot_report.py");
  for (const auto& p : candidates)
    if (fs::exists(p, ec)) return p.string();
  return "";
}

// Runs the plotting script; returns the plots it drew ({file, title}), or an empty list with a warning.
Json draw_plots(const fs::path& out_dir, const ReportOptions& o, std::ostream& err) {
  const fs::path manifest = out_dir / "plots.json";
  std::error_code ec;
  fs::remove(manifest, ec);
  const std::string script = find_plot_script(o);
  if (script.empty()) {
    err << "labrun report: warning: scripts/plot_report.py not found; no plots\n";
    return Json::array();
  }
  // The first python3 that has matplotlib: the one on PATH, else the system's (Debian's python3-matplotlib
  // installs for /usr/bin/python3, which a pyenv or venv python3 on PATH does not see).
  std::string python;
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) {
      python = candidate;
      break;
    }
  if (python.empty()) {
    err << "labrun report: warning: python3 with matplotlib not available (Debian: python3-matplotlib); no plots\n";
    return Json::array();
  }
  const fs::path log = out_dir / "plot.log";
  const std::string cmd = python + " " + shell_quote(script) + " " + shell_quote((out_dir / "points.csv").string()) +
                          " " + shell_quote(out_dir.string()) + " >" + shell_quote(log.string()) + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    err << "labrun report: warning: plotting failed (exit status " << rc << "); see " << log.string() << "\n";
    return Json::array();
  }
  fs::remove(log, ec);
  try {
    std::ifstream f(manifest);
    const Json m = Json::parse(f);
    Json plots = Json::array();
    if (m.is_array())
      for (const auto& p : m)
        if (p.is_object() && p.contains("file") && p["file"].is_string() && fs::exists(out_dir / p["file"].get<std::string>()))
          plots.push_back(p);
    return plots;
  } catch (const std::exception& e) {
    err << "labrun report: warning: the plotting script wrote no readable plots.json (" << e.what() << ")\n";
    return Json::array();
  }
}

// ---- report.md -------------------------------------------------------------------------------------------

std::string axes_of(const Json& rec, const std::vector<std::string>& only) {
  const Json* ax = child(rec, {"axes"});
  return ax ? format_axes(*ax, only) : "";
}

void summary_section(const Context& c, std::ostream& md) {
  md << "## Summary\n\n";
  md << "|  |";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) md << " run " << ri << " |";
  md << "\n|---|";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) md << "---|";
  md << "\n";
  auto row = [&](const std::string& label, auto fn) {
    md << "| " << label << " |";
    for (std::size_t ri = 0; ri < c.runs.size(); ++ri) md << " " << cell(fn(c.runs[ri], ri)) << " |";
    md << "\n";
  };
  row("file", [](const RunData& r, std::size_t) { return code(fs::path(r.file).filename().string()); });
  row("experiment", [](const RunData& r, std::size_t) {
    const std::string d = word(r.header, {"config", "description"});
    return word(r.header, {"config", "experiment"}) + (d.empty() ? "" : ": " + d);
  });
  row("config", [](const RunData& r, std::size_t) {
    const std::string sha = word(r.header, {"config", "sha256"});
    return word(r.header, {"config", "path"}) + (sha.size() > 12 ? " (sha256 " + sha.substr(0, 12) + "…)" : "");
  });
  row("created (UTC)", [](const RunData& r, std::size_t) { return word(r.header, {"created_utc"}); });
  row("device", [](const RunData& r, std::size_t) { return device_text(r.header); });
  row("build", [](const RunData& r, std::size_t) { return build_text(r.header); });
  row("timing", [](const RunData& r, std::size_t) {
    std::string s = "lab.timing " + word(r.header, {"lab", "timing"}) + ", L2 " + word(r.header, {"lab", "l2"});
    const double ci = num(r.header, {"lab", "target_rel_ci"});
    if (std::isfinite(ci)) s += ", median CI target ±" + format_percent(ci);
    return s;
  });
  row("calibration", [](const RunData& r, std::size_t) { return calibration_text(r.header); });
  row("processes", [&](const RunData& r, std::size_t) {
    const double k = num(r.header, {"processes", "count"});
    if (!std::isfinite(k) || k < 2) return std::string("1 (one process: variation between processes not sampled)");
    std::vector<double> spread;
    int warned = 0;
    for (std::size_t i : r.points) {
      const double sp = num(c.records[i], {"timing", "processes", "spread"});
      if (std::isfinite(sp)) spread.push_back(sp);
      if (const Json* w = child(c.records[i], {"warnings"}); w && w->is_array())
        for (const auto& x : *w) warned += word(x, {"kind"}) == "process_spread";
    }
    return fmt::format("{} pooled (lab.processes); the processes' medians of a point differ by a median {} "
                       "(max {}); {} point(s) warned `process_spread`. Winners' and crossovers' intervals come "
                       "from the pooled samples; `labrun diff` also compares the processes' medians",
                       static_cast<int>(k), format_percent(median_of(spread)),
                       format_percent(spread.empty() ? kNaN : *std::max_element(spread.begin(), spread.end())),
                       warned);
  });
  row("points", [&](const RunData& r, std::size_t) {
    std::map<std::string, int> counts;
    for (std::size_t i : r.points) counts[word(c.records[i], {"status"})]++;
    return std::to_string(r.points.size()) + " (" + std::to_string(r.variants.size()) + " variants): " +
           counts_text(counts);
  });
  row("bound classes", [&](const RunData& r, std::size_t) {
    std::map<std::string, int> counts, weak;
    for (std::size_t i : r.points) {
      const Json& in = c.records[i]["interpretation"];
      counts[word(in, {"bound"})]++;
      if (word(in, {"confidence"}) == "weak") weak[word(in, {"bound"})]++;
    }
    std::string s = counts_text(counts);
    if (!weak.empty()) s += " (of which weak: " + counts_text(weak) + ")";
    return s;
  });
  row("suspect points", [&](const RunData& r, std::size_t) {
    int n = 0;
    for (std::size_t i : r.points) n += c.records[i]["interpretation"].value("suspect", false);
    return std::to_string(n) + (n ? " (see \"Suspect points\")" : "");
  });
  row("header warnings", [](const RunData& r, std::size_t) {
    std::string s;
    if (const Json* w = child(r.header, {"warnings"}); w && w->is_array())
      for (const auto& x : *w) s += (s.empty() ? "" : "; ") + word(x, {"message"});
    return s.empty() ? std::string("none") : s;
  });
  md << "\nBound classes, thresholds and formulas: docs/metrics.md, \"Interpretation\". A *weak* class is the "
        "nearer explanation when no threshold is met outright.\n\n";
}

std::string when_text(const Json& when) {
  std::string s;
  for (const auto& [k, v] : when.items()) {
    std::string part;
    if (v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number())
      part = k + " ∈ [" + format_axis_value(v[0]) + ", " + format_axis_value(v[1]) + "]";
    else if (v.is_array()) {
      part = k + " ∈ {";
      for (std::size_t i = 0; i < v.size(); ++i) part += (i ? ", " : "") + format_axis_value(v[i]);
      part += "}";
    } else {
      part = k + " = " + format_axis_value(v);
    }
    s += (s.empty() ? "" : ", ") + part;
  }
  return s.empty() ? "everywhere" : s;
}

void hypotheses_section(const Context& c, std::ostream& md) {
  md << "## Hypothesis verdicts\n\n";
  const Json& hyps = c.analysis["hypotheses"];
  if (hyps.empty()) {
    md << "No run's config states a hypothesis.\n\n";
    return;
  }
  const auto& t = kInterpretThresholds;
  md << "Each hypothesis from the config is tested at every *matching point*: both variants ran ok (and are not "
        "suspect) with the same axes, inside `when` (ranges inclusive). The ratio is time(`than`) / time(`faster`). "
     << "**confirmed** when the ratio reaches `by_at_least` at ≥ " << format_percent(t.confirm_fraction)
     << " of the matching points; **refuted** when it does at fewer than " << format_percent(t.refute_fraction)
     << "; **inconclusive** in between or with no matching point.\n\n";
  int k = 0;
  for (const auto& h : hyps) {
    ++k;
    const int run = h["run"].get<int>();
    const std::vector<std::string>& varying = c.runs[static_cast<std::size_t>(run)].varying;
    const std::string fa = word(h, {"faster"}), th = word(h, {"than"});
    md << "### H" << k << ": " << code(fa) << " faster than " << code(th) << " by ≥ "
       << format_number(num(h, {"by_at_least"})) << "× when " << when_text(h["when"]) << " — **"
       << word(h, {"verdict"}) << "**\n\n";
    md << "Run " << run << " (" << code(fs::path(c.runs[static_cast<std::size_t>(run)].file).filename().string())
       << "). " << capitalized(word(h, {"reason"})) << ".";
    if (h["matched"].get<std::size_t>() > 0) {
      md << " time(" << th << ") / time(" << fa << "): min " << ratio_text(num(h, {"ratio_min"})) << " at "
         << format_axes(h["min_point"]["axes"], varying) << "; median " << ratio_text(num(h, {"ratio_median"}))
         << "; max " << ratio_text(num(h, {"ratio_max"})) << " at " << format_axes(h["max_point"]["axes"], varying)
         << ".";
    }
    if (h.value("skipped", 0) > 0) {
      std::map<std::string, int> why;
      for (const auto& [w, n] : h["skipped_because"].items()) why[w] = n.get<int>();
      md << " Left out: " << h["skipped"].get<std::size_t>() << " matching points where a side did not give a "
         << "usable time (" << counts_text(why) << ").";
    }
    md << "\n\n";
    const Json& pts = h["points"];
    if (!pts.empty()) {
      md << "| point | " << th << " / " << fa << " | meets " << format_number(num(h, {"by_at_least"})) << "× |\n"
         << "|---|---:|:---:|\n";
      std::size_t shown = 0;
      for (const auto& p : pts) {
        if (++shown > 60) break;
        md << "| " << cell(format_axes(p["axes"], varying)) << " | " << ratio_text(num(p, {"ratio"})) << " | "
           << (p["passed"].get<bool>() ? "yes" : "**no**") << " |\n";
      }
      if (pts.size() > 60) md << "\n(" << pts.size() - 60 << " more points in the analysis.)\n";
      md << "\n";
    }
  }
}

// The masking experiment's question, answered from the data: where `index` loses, by how much, where it wins,
// and why.
void masking_section(const Context& c, std::ostream& md) {
  bool any = false;
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const RunData& run = c.runs[ri];
    auto has = [&](const char* v) { return std::find(run.variants.begin(), run.variants.end(), v) != run.variants.end(); };
    if (word(run.header, {"config", "experiment"}) != "masking" || !has("index") || !has("where")) continue;
    const int rid = static_cast<int>(ri);
    if (!any) md << "## Where boolean indexing loses and wins\n\n";
    any = true;
    if (c.runs.size() > 1) md << "### Run " << ri << " (" << code(fs::path(run.file).filename().string()) << ")\n\n";

    // Groups of this run, as (axes, variant → time or NaN).
    struct G {
      Json axes;
      std::map<std::string, double> t;
      std::map<std::string, std::string> id;
    };
    std::vector<G> groups;
    for (const auto& g : c.analysis["groups"]) {
      if (g["run"].get<int>() != rid) continue;
      G x;
      x.axes = g["axes"];
      for (const auto& [v, t] : g["times_s"].items()) x.t[v] = t.is_number() ? t.get<double>() : kNaN;
      for (const auto& [v, id] : g["ids"].items()) x.id[v] = id.get<std::string>();
      groups.push_back(std::move(x));
    }
    auto axis_num = [](const Json& axes, const char* k) {
      return axes.contains(k) ? num(axes, {k}) : kNaN;
    };
    auto axis_word = [](const Json& axes, const char* k) { return word(axes, {k}); };
    const bool has_multiply = has("multiply");

    // 1. Ratios at moderate densities, per slice (mode, dtype, downstream) and n.
    struct Row {
      std::vector<double> rw, rm, stall;
      std::map<std::string, int> bounds;
    };
    std::map<std::tuple<std::string, std::string, double, double>, Row> rows;
    std::vector<double> all_rw0, all_rm0;  // downstream 0 (the seed's setting)
    std::map<double, std::vector<double>> rw_by_n0;
    for (const auto& g : groups) {
      const double d = axis_num(g.axes, "density");
      if (!(d >= 0.1 - 1e-12 && d <= 0.9 + 1e-12)) continue;
      const double ti = g.t.count("index") ? g.t.at("index") : kNaN;
      const double tw = g.t.count("where") ? g.t.at("where") : kNaN;
      const double tm = g.t.count("multiply") ? g.t.at("multiply") : kNaN;
      if (!positive(ti) || !positive(tw)) continue;
      const double ds = axis_num(g.axes, "downstream");
      auto& row = rows[{axis_word(g.axes, "mode"), axis_word(g.axes, "dtype"), ds, axis_num(g.axes, "n")}];
      row.rw.push_back(ti / tw);
      if (positive(tm)) row.rm.push_back(ti / tm);
      if (const Json* r = record_by_id(c, rid, g.id.at("index"))) {
        const Json& in = (*r)["interpretation"];
        row.bounds[word(in, {"bound"})]++;
        const double s = num(in, {"host_stall_share"});
        if (std::isfinite(s)) row.stall.push_back(s);
      }
      if (ds == 0 || !std::isfinite(ds)) {
        all_rw0.push_back(ti / tw);
        if (positive(tm)) all_rm0.push_back(ti / tm);
        rw_by_n0[axis_num(g.axes, "n")].push_back(ti / tw);
      }
    }
    auto range_text = [](const std::vector<double>& v) {
      if (v.empty()) return std::string("n/a");
      return ratio_text(median_of(v)) + " (" + ratio_text(*std::min_element(v.begin(), v.end())) + "–" +
             ratio_text(*std::max_element(v.begin(), v.end())) + ")";
    };

    // Wins: index faster than both where and multiply.
    struct Win {
      Json axes;
      double ti, tw, tm, by;
      bool significant;
    };
    std::vector<Win> wins;
    std::size_t compared = 0, multiply_timed = 0;
    for (const auto& g : groups) {
      const double ti = g.t.count("index") ? g.t.at("index") : kNaN;
      const double tw = g.t.count("where") ? g.t.at("where") : kNaN;
      const double tm = has_multiply && g.t.count("multiply") ? g.t.at("multiply") : kNaN;
      if (!positive(ti) || !positive(tw)) continue;
      ++compared;
      multiply_timed += positive(tm);
      const double best = positive(tm) ? std::min(tw, tm) : tw;
      if (ti >= best) continue;
      // Significant when index's CI lies below the better rival's.
      bool sig = false;
      const Json* ri_rec = record_by_id(c, rid, g.id.at("index"));
      const Json* rb_rec = record_by_id(c, rid, g.id.at(positive(tm) && tm < tw ? "multiply" : "where"));
      if (ri_rec && rb_rec) sig = iteration_time(*ri_rec).ci95_high_s < iteration_time(*rb_rec).ci95_low_s;
      wins.push_back(Win{g.axes, ti, tw, tm, best / ti, sig});
    }

    // Narrative.
    // `multiply` is named only where it had a time (it may be incorrect everywhere, as with planted NaNs: C06).
    const std::string vs = multiply_timed > 0                ? "`where` and `multiply`"
                           : has_multiply && compared > 0 ? "`where` (`multiply` has no time here: not ok)"
                                                           : "`where`";
    if (!all_rw0.empty()) {
      md << "**Where it loses.** At moderate densities (10%–90%) with no downstream work, `index` takes a median "
         << ratio_text(median_of(all_rw0)) << " the time of `where` (range "
         << ratio_text(*std::min_element(all_rw0.begin(), all_rw0.end())) << "–"
         << ratio_text(*std::max_element(all_rw0.begin(), all_rw0.end())) << ")";
      if (!all_rm0.empty()) md << " and " << ratio_text(median_of(all_rm0)) << " the time of `multiply`";
      md << ", over " << all_rw0.size() << " comparisons. By n (median of index / where): ";
      bool first = true;
      for (const auto& [n, v] : rw_by_n0) {
        md << (first ? "" : ", ") << "n = " << format_number(n) << ": " << ratio_text(median_of(v));
        first = false;
      }
      if (rw_by_n0.size() >= 2) {
        const double a = median_of(rw_by_n0.begin()->second), b = median_of(rw_by_n0.rbegin()->second);
        double peak = 0, peak_n = kNaN;
        for (const auto& [n, v] : rw_by_n0)
          if (median_of(v) > peak) {
            peak = median_of(v);
            peak_n = n;
          }
        md << ". The gap " << (b > a * 1.1 ? "widens" : b < a / 1.1 ? "narrows" : "stays about the same")
           << " from the smallest to the largest n, and is largest at n = " << format_number(peak_n) << " ("
           << ratio_text(peak) << ")";
      }
      md << ". A ratio above 1 means `index` is slower.\n\n";
    }
    if (!wins.empty()) {
      const auto best = std::max_element(wins.begin(), wins.end(), [](const Win& a, const Win& b) { return a.by < b.by; });
      std::map<std::string, std::set<double>> dens_by_ds, n_by_ds;
      for (const auto& w : wins) {
        const std::string ds = format_axis_value(w.axes.value("downstream", Json(0)));
        dens_by_ds[ds].insert(axis_num(w.axes, "density"));
        n_by_ds[ds].insert(axis_num(w.axes, "n"));
      }
      md << "**Where it wins.** `index` is faster than " << vs << " at " << wins.size() << " of " << compared
         << " points where they can be compared";
      std::size_t sig = 0;
      for (const auto& w : wins) sig += w.significant;
      md << " (" << sig << " with non-overlapping confidence intervals); by up to " << ratio_text(best->by) << " at "
         << format_axes(best->axes, run.varying) << ". ";
      for (const auto& [ds, dens] : dens_by_ds) {
        const auto& ns = n_by_ds[ds];
        auto span = [](const auto& set) {
          return *set.begin() == *set.rbegin()
                     ? format_number(*set.begin())
                     : "from " + format_number(*set.begin()) + " to " + format_number(*set.rbegin());
        };
        md << "With downstream = " << ds << ": n " << span(ns) << ", density " << span(dens) << ". ";
      }
      md << "\n\n";
    } else {
      md << "**Where it wins.** Nowhere in this sweep is `index` faster than " << vs << ".\n\n";
    }

    // Why: the index points' bound classes, their stall, and the static-shape variants' traffic.
    std::map<std::string, int> index_bounds;
    std::vector<double> index_stall, index_launch;
    int unsupported = 0;
    double fixed = kNaN, n_min = std::numeric_limits<double>::infinity();
    for (std::size_t i : run.points) {
      const Json& r = c.records[i];
      if (word(r, {"variant"}) != "index") continue;
      const std::string st = word(r, {"status"});
      if (st == "capture_unsupported") ++unsupported;
      if (st != "ok") continue;
      index_bounds[word(r["interpretation"], {"bound"})]++;
      const double s = num(r["interpretation"], {"host_stall_share"});
      if (std::isfinite(s)) index_stall.push_back(s);
      const double l = num(r["interpretation"], {"launch_overhead_share"});
      if (std::isfinite(l)) index_launch.push_back(l);
      const double n = num(r, {"axes", "n"});
      if (n < n_min) n_min = n;
    }
    std::vector<double> small;
    for (std::size_t i : run.points) {
      const Json& r = c.records[i];
      // The cheapest configuration only: no downstream work where the experiment has that axis.
      const double ds = num(r, {"axes", "downstream"});
      if (word(r, {"variant"}) == "index" && word(r, {"status"}) == "ok" && num(r, {"axes", "n"}) == n_min &&
          (!std::isfinite(ds) || ds == 0))
        small.push_back(iteration_time(r).time_s);
    }
    fixed = median_of(small);
    // where at the largest n: its traffic and its fraction of the memory ceiling.
    double n_max = 0;
    for (std::size_t i : run.points) n_max = std::max(n_max, num(c.records[i], {"axes", "n"}));
    std::map<double, std::vector<double>> excess;  // downstream → issued / compulsory bytes
    std::vector<double> fmem;
    for (std::size_t i : run.points) {
      const Json& r = c.records[i];
      if (word(r, {"variant"}) != "where" || word(r, {"status"}) != "ok" || num(r, {"axes", "n"}) != n_max) continue;
      const double b = num(r, {"cost", "bytes"}), cb = num(r, {"cost", "compulsory_bytes"});
      const double ds = num(r, {"axes", "downstream"});
      if (positive(cb)) excess[std::isfinite(ds) ? ds : 0].push_back(b / cb);
      const double f = num(r["interpretation"], {"fraction_of", "memory_ceiling"});
      if (std::isfinite(f)) fmem.push_back(f);
    }
    int total_index = 0;
    for (const auto& [b, n] : index_bounds) total_index += n;
    md << "**Why.** ";
    if (total_index > 0) {
      const auto top = std::max_element(index_bounds.begin(), index_bounds.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
      md << "`index` is classed " << top->first << "-bound at " << top->second << " of its " << total_index
         << " timed points (" << counts_text(index_bounds) << "). It copies the selected count to the host every "
         << "iteration to size its result: the host waits for it, and cannot queue the next launches ahead, so "
         << "every launch after the sync is exposed (its launches at the calibrated eager cost: median "
         << format_percent(median_of(index_launch)) << " of its time; the stall the two clocks can see: median "
         << format_percent(median_of(index_stall)) << " of the wall time, a lower bound, since neither clock sees "
         << "the device idle while the count travels). Its fixed cost "
         << "shows at the smallest size: " << format_time(fixed) << " median at n = " << format_number(n_min)
         << " (no downstream work)"
         << ", where there is almost no work to save. ";
    }
    if (unsupported > 0)
      md << "In graph mode it cannot run at all: " << unsupported
         << " points are capture_unsupported (a host read cannot be captured). ";
    if (!excess.empty()) {
      md << "`where` (like `multiply`) computes on every element: at n = " << format_number(n_max) << " it moves ";
      bool first = true;
      for (const auto& [ds, v] : excess) {
        md << (first ? "" : ", ") << fmt::format("{:.1f}", median_of(v)) << "× the compulsory bytes with downstream = "
           << format_number(ds);
        first = false;
      }
      md << " (median " << format_percent(median_of(fmem)) << " of the memory ceiling), so its time grows with n "
         << "and with the "
         << "downstream work whatever the density. Compaction makes the work after it scale with the selected "
         << "count instead: `index` wins where that saving (small density, expensive downstream work, large n) "
         << "outweighs its fixed sync cost.";
    }
    md << "\n\n";

    // Table: ratios by slice and n.
    if (!rows.empty()) {
      md << "Ratios at moderate densities (10%–90%): median (min–max) over the densities; above 1 means `index` "
            "is slower.\n\n"
         << "| mode | dtype | downstream | n | index / where | index / multiply | index bound | index host stall |\n"
         << "|---|---|---:|---:|---:|---:|---|---:|\n";
      for (const auto& [k, row] : rows) {
        const auto& [mode, dtype, ds, n] = k;
        md << "| " << mode << " | " << dtype << " | " << format_number(ds) << " | " << format_number(n) << " | "
           << range_text(row.rw) << " | " << range_text(row.rm) << " | " << counts_text(row.bounds) << " | "
           << format_percent(median_of(row.stall)) << " |\n";
      }
      md << "\n";
    }
    if (!wins.empty()) {
      md << "Points where `index` beats " << vs << ":\n\n| point | index | where |"
         << (has_multiply ? " multiply |" : "") << " index faster by | significant |\n|---|---:|---:|"
         << (has_multiply ? "---:|" : "") << "---:|:---:|\n";
      for (const auto& w : wins) {
        md << "| " << cell(format_axes(w.axes, run.varying)) << " | " << format_time(w.ti) << " | "
           << format_time(w.tw) << " |" << (has_multiply ? " " + format_time(w.tm) + " |" : "") << " "
           << ratio_text(w.by) << " | " << (w.significant ? "yes" : "no") << " |\n";
      }
      md << "\n";
    }
    // Crossovers that involve index against where or multiply.
    std::vector<const Json*> cx;
    for (const auto& x : c.analysis["crossovers"]) {
      if (x["run"].get<int>() != rid || !x["significant"].get<bool>()) continue;
      const std::string a = word(x, {"faster_below"}), b = word(x, {"faster_above"});
      if ((a == "index" || b == "index") && (a == "where" || b == "where" || a == "multiply" || b == "multiply"))
        cx.push_back(&x);
    }
    if (!cx.empty()) {
      md << "Crossovers of `index` against `where` and `multiply` (significant at both ends)";
      const bool fold = cx.size() > 12;
      md << (fold ? ": " + std::to_string(cx.size()) + ", listed below.\n\n<details><summary>Show them</summary>\n\n"
                  : ":\n\n");
      for (const Json* x : cx) md << "- " << word(*x, {"text"}) << "\n";
      md << (fold ? "\n</details>\n\n" : "\n");
    }
  }
}

void plots_section(const Json& plots, std::ostream& md) {
  md << "## Plots\n\n";
  if (plots.empty()) {
    md << "No plots were drawn (python3 with matplotlib was not available, or plotting failed).\n\n";
    return;
  }
  for (const auto& p : plots) {
    const std::string title = p.value("title", p["file"].get<std::string>());
    md << "### " << title << "\n\n![" << title << "](" << p["file"].get<std::string>() << ")\n\n";
  }
}

void winners_section(const Context& c, std::ostream& md) {
  md << "## Winners\n\n"
        "The fastest variant at each point (same axes), its margin over the runner-up (time ratio), and whether the "
        "margin is beyond the noise (the medians' 95% confidence intervals do not overlap).\n\n";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const RunData& run = c.runs[ri];
    std::vector<const Json*> gs;
    std::map<std::string, int> wins;
    for (const auto& g : c.analysis["groups"])
      if (g["run"].get<std::size_t>() == ri && g["runner_up"].is_string()) {
        gs.push_back(&g);
        wins[word(g, {"winner"})]++;
      }
    if (c.runs.size() > 1) md << "### Run " << ri << " (" << code(fs::path(run.file).filename().string()) << ")\n\n";
    if (gs.empty()) {
      md << "No point has two usable variants to compare.\n\n";
      continue;
    }
    md << "Wins: " << counts_text(wins) << " (of " << gs.size() << " points).\n\n";
    md << "| point | winner | time | runner-up | time | margin | beyond noise |\n|---|---|---:|---|---:|---:|:---:|\n";
    for (const Json* g : gs)
      md << "| " << cell(format_axes((*g)["axes"], run.varying)) << " | " << word(*g, {"winner"}) << " | "
         << format_time(num(*g, {"winner_time_s"})) << " | " << word(*g, {"runner_up"}) << " | "
         << format_time(num(*g, {"runner_up_time_s"})) << " | " << ratio_text(num(*g, {"margin_ratio"})) << " | "
         << ((*g)["significant"].get<bool>() ? "yes" : "no") << " |\n";
    md << "\n";
  }
}

void crossovers_section(const Context& c, std::ostream& md) {
  md << "## Crossovers\n\n"
        "For each numeric axis, pair of variants and slice (all other axes fixed): where the faster of the two "
        "changes between consecutive axis values, the crossing interpolated where log(time ratio) is zero (in "
        "log(axis) for sizes swept over decades, linearly otherwise). *Significant*: the confidence intervals are "
        "apart at both ends.\n\n";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    std::vector<const Json*> sig;
    std::size_t total = 0;
    for (const auto& x : c.analysis["crossovers"])
      if (x["run"].get<std::size_t>() == ri) {
        ++total;
        if (x["significant"].get<bool>()) sig.push_back(&x);
      }
    if (c.runs.size() > 1)
      md << "### Run " << ri << " (" << code(fs::path(c.runs[ri].file).filename().string()) << ")\n\n";
    md << total << " crossovers, " << sig.size() << " significant.";
    if (sig.empty()) {
      md << "\n\n";
      continue;
    }
    // Most decisive first: the smaller of the two end ratios, largest first.
    std::stable_sort(sig.begin(), sig.end(), [](const Json* a, const Json* b) {
      return std::min(num(*a, {"ratio_below"}), num(*a, {"ratio_above"})) >
             std::min(num(*b, {"ratio_below"}), num(*b, {"ratio_above"}));
    });
    const std::size_t top = std::min<std::size_t>(25, sig.size());
    md << " The " << top << " most decisive (largest margin at both ends):\n\n";
    auto table = [&](std::size_t from, std::size_t to) {
      md << "| axis | between | at ≈ | faster below → above | margin below | margin above | other axes |\n"
         << "|---|---|---:|---|---:|---:|---|\n";
      for (std::size_t i = from; i < to; ++i) {
        const Json& x = *sig[i];
        md << "| " << word(x, {"axis"}) << " | " << format_axis_value(x["between"][0]) << " – "
           << format_axis_value(x["between"][1]) << " | " << format_number(num(x, {"at"})) << " | "
           << word(x, {"faster_below"}) << " → " << word(x, {"faster_above"}) << " | "
           << ratio_text(num(x, {"ratio_below"})) << " | " << ratio_text(num(x, {"ratio_above"})) << " | "
           << cell(format_axes(x["fixed"])) << " |\n";
      }
      md << "\n";
    };
    table(0, top);
    if (sig.size() > top) {
      md << "<details><summary>All " << sig.size() << " significant crossovers</summary>\n\n";
      table(0, sig.size());
      md << "</details>\n\n";
    }
  }
}

void note_block(const Json& rec, const std::vector<std::string>& varying, std::ostream& md) {
  const Json& in = rec["interpretation"];
  const Json& n = in["note"];
  md << "#### " << word(rec, {"variant"}) << ": " << axes_of(rec, varying) << "\n\n"
     << "- **Measured:** " << word(n, {"measured"}) << "\n"
     << "- **Likely bound:** " << word(n, {"bound"}) << "\n"
     << "- **Evidence:** " << word(n, {"evidence"}) << "\n"
     << "- **Next change:** " << word(n, {"next_change"}) << "\n"
     << "- **Other cause checked:** " << word(n, {"other_cause_checked"}) << "\n";
  if (in.value("suspect", false)) md << "- **Suspect:** " << word(in, {"suspect_reason"}) << "\n";
  md << "\n";
}

// A representative point per variant and mode: the largest n, the other numeric axes nearest the middle of their
// swept values, word axes at their most common value.
std::vector<std::size_t> representative_points(const Context& c, const RunData& run) {
  std::map<std::string, std::vector<double>> numeric;
  std::map<std::string, std::map<std::string, int>> words;
  for (std::size_t i : run.points)
    if (const Json* ax = child(c.records[i], {"axes"}); ax && ax->is_object())
      for (const auto& [k, v] : ax->items()) {
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
  // Score: lower is more representative.
  auto score = [&](const Json& axes) {
    double s = 0;
    for (const auto& [k, v] : axes.items()) {
      if (k == "mode") continue;
      if (v.is_number()) {
        if (k == "n") continue;
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
  std::vector<std::size_t> out;
  std::map<std::string, std::size_t> pick;
  std::vector<std::string> order;
  for (std::size_t i : run.points) {
    const Json& r = c.records[i];
    if (word(r, {"status"}) != "ok" || r["interpretation"].value("suspect", false)) continue;  // suspect: own section
    const std::string k = word(r, {"variant"}) + "/" + word(r, {"axes", "mode"});
    if (!pick.count(k)) {
      pick[k] = i;
      order.push_back(k);
      continue;
    }
    const Json& cur = c.records[pick[k]];
    const double n = num(r, {"axes", "n"}), cn = num(cur, {"axes", "n"});
    const bool larger = std::isfinite(n) && (!std::isfinite(cn) || n > cn);
    const bool same_n = n == cn || (!std::isfinite(n) && !std::isfinite(cn));
    if (larger || (same_n && score(r["axes"]) < score(cur["axes"]))) pick[k] = i;
  }
  for (const auto& k : order) out.push_back(pick[k]);
  return out;
}

void notes_section(const Context& c, std::ostream& md) {
  md << "## Notes on selected points\n\n"
        "Five-part notes (measured; likely bound; evidence; next change; other cause checked) for one point per "
        "variant and mode: the largest n, the other axes near the middle of the sweep. Every point's note is in its "
        "record's \"interpretation\".\n\n";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const RunData& run = c.runs[ri];
    if (c.runs.size() > 1) md << "### Run " << ri << " (" << code(fs::path(run.file).filename().string()) << ")\n\n";
    for (std::size_t i : representative_points(c, run)) note_block(c.records[i], run.varying, md);
  }
  md << "## Suspect points\n\n";
  std::size_t n = 0;
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri)
    for (std::size_t i : c.runs[ri].points)
      if (c.records[i]["interpretation"].value("suspect", false)) {
        if (n++ == 0)
          md << "A time below the physical floor by more than " << format_percent(kInterpretThresholds.suspect_margin)
             << ", or taken with an unsynchronized host clock, is not a measurement of the work: it is left out of "
                "winners, crossovers and hypotheses.\n\n";
        note_block(c.records[i], c.runs[ri].varying, md);
      }
  if (n == 0) md << "None: no point is faster than its physical floor, and every time was taken synchronized.\n\n";
}

void tables_section(const Context& c, std::ostream& md) {
  md << "## Time and bandwidth by variant\n\n";
  for (std::size_t ri = 0; ri < c.runs.size(); ++ri) {
    const RunData& run = c.runs[ri];
    if (c.runs.size() > 1) md << "### Run " << ri << " (" << code(fs::path(run.file).filename().string()) << ")\n\n";
    std::vector<const Json*> gs;
    for (const auto& g : c.analysis["groups"])
      if (g["run"].get<std::size_t>() == ri) gs.push_back(&g);
    auto table = [&](const std::string& title, auto value) {
      md << title << "\n\n| point |";
      for (const auto& v : run.variants) md << " " << v << " |";
      md << "\n|---|";
      for (std::size_t k = 0; k < run.variants.size(); ++k) md << "---:|";
      md << "\n";
      for (const Json* g : gs) {
        md << "| " << cell(format_axes((*g)["axes"], run.varying)) << " |";
        for (const auto& v : run.variants) {
          const Json* id = child(*g, {"ids", v.c_str()});
          const Json* r = id ? record_by_id(c, static_cast<int>(ri), *id) : nullptr;
          std::string s = "–";
          if (r) s = value(*r, word(*g, {"winner"}) == v);
          md << " " << s << " |";
        }
        md << "\n";
      }
      md << "\n";
    };
    table("Median time per loop iteration: the measured time (GPU time; live time for `index`, host syncs included), "
          "or, marked (submit), the host's submission time where it exceeds the GPU time, because an eager loop "
          "cannot be fed faster; the winner in bold; a status where the point was not timed:",
          [](const Json& r, bool winner) {
            if (word(r, {"status"}) != "ok") return word(r, {"status"});
            // What a loop of the iteration costs: an eager point the host cannot feed shows its submission time.
            const IterationTime it = iteration_time(r);
            const std::string t = format_time(it.time_s) + (it.host_paced ? " (submit)" : "");
            const bool sus = r["interpretation"].value("suspect", false);
            return (winner ? "**" + t + "**" : t) + (sus ? " (suspect)" : "");
          });
    table("Achieved bandwidth (bytes issued / GPU time; `time_s`, not the loop time above) and its fraction of the "
          "memory ceiling:", [](const Json& r, bool) {
      if (word(r, {"status"}) != "ok") return std::string("–");
      const Json& in = r["interpretation"];
      return format_rate(num(in, {"achieved_bandwidth_Bps"}), "B/s") + " (" +
             format_percent(num(in, {"fraction_of", "memory_ceiling"})) + ")";
    });
  }
}

std::string render(const Context& c, const std::vector<std::string>& paths, const Json& plots) {
  std::ostringstream md;
  md << "# labrun report\n\nFrom ";
  for (std::size_t i = 0; i < paths.size(); ++i) md << (i ? ", " : "") << code(paths[i]);
  std::size_t points = 0;
  for (const auto& r : c.runs) points += r.points.size();
  md << ": " << c.runs.size() << (c.runs.size() == 1 ? " run, " : " runs, ") << points << " points.\n\n";
  summary_section(c, md);
  hypotheses_section(c, md);
  masking_section(c, md);
  plots_section(plots, md);
  winners_section(c, md);
  crossovers_section(c, md);
  notes_section(c, md);
  tables_section(c, md);
  return md.str();
}

}  // namespace

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err) {
  return cmd_report(paths, out_dir, out, err, ReportOptions{});
}

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err, const ReportOptions& options) {
  if (paths.empty()) {
    err << "labrun report: no result files given\n";
    return kExitUsage;
  }
  Context c;
  try {
    load(paths, c, err);
  } catch (const BadInput& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitUsage;
  }
  const fs::path dir(out_dir);
  try {
    std::error_code ec;
    if (options.replace) fs::remove_all(dir, ec);  // no stale plots from an earlier report
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw OutputError("cannot create directory " + out_dir + ": " + ec.message());
    write_csv(c, dir / "points.csv");
    write_ceilings(c, dir / "ceilings.json");
    const Json plots = options.plots ? draw_plots(dir, options, err) : Json::array();
    const fs::path md_path = dir / "report.md";
    std::ofstream md(md_path);
    md << render(c, paths, plots);
    if (!md) throw OutputError("cannot write " + md_path.string());
    std::size_t points = 0;
    for (const auto& r : c.runs) points += r.points.size();
    out << "labrun report: " << points << " points from " << paths.size() << (paths.size() == 1 ? " file" : " files")
        << " -> " << md_path.string() << ", " << (dir / "points.csv").string() << ", " << plots.size()
        << (plots.size() == 1 ? " plot" : " plots") << "\n";
  } catch (const OutputError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace labrun
