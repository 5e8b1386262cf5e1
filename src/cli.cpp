#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <tuple>

#include "build_info.hpp"
#include "config.hpp"
#include "diff.hpp"
#include "env.hpp"
#include "interpret.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "point_record.hpp"
#include "processes.hpp"
#include "record.hpp"
#include "report.hpp"
#include "status.hpp"
#include "spawn.hpp"
#include "sweep.hpp"

namespace labrun {

namespace {

struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --device auto|cpu|cuda[:N]. auto: first CUDA device if one can be opened, else the host with a notice.
std::unique_ptr<Backend> open_backend(const std::string& device, const DeviceHooks& hooks) {
  if (device == "cpu" || device == "host") return std::make_unique<HostBackend>();
  if (device == "auto") {
    std::string why = "labrun was built without CUDA";
    if (hooks.open_cuda)
      if (auto b = hooks.open_cuda(0, &why)) return b;
    std::fprintf(stderr, "labrun: no usable CUDA device (%s); running on the host backend\n", why.c_str());
    return std::make_unique<HostBackend>();
  }
  if (device.rfind("cuda", 0) == 0) {
    int index = 0;
    if (device.size() > 4) {
      if (device[4] != ':') throw std::invalid_argument("--device: expected cuda or cuda:N, got '" + device + "'");
      try {
        std::size_t used = 0;
        index = std::stoi(device.substr(5), &used);
        if (used != device.size() - 5 || index < 0) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw std::invalid_argument("--device: '" + device + "' has no valid device number");
      }
    }
    if (!hooks.open_cuda) throw DeviceError("--device " + device + ": labrun was built without CUDA");
    std::string why;
    if (auto b = hooks.open_cuda(index, &why)) return b;
    throw DeviceError("--device " + device + ": " + why);
  }
  throw std::invalid_argument("--device: expected auto, cpu, cuda or cuda:N, got '" + device + "'");
}

// A time from a record as "114 µs" (format_time, shared with the report), "-" when absent.
std::string fmt_time(double t) { return std::isfinite(t) ? format_time(t) : "-"; }

std::string short_axes(const Json& axes) {
  std::string out;
  for (const auto& [k, v] : axes.items()) {
    if (!out.empty()) out += ' ';
    out += k + "=" + format_axis_value(v);  // as the report and --dry-run write it: density=0, not 0.0
  }
  return out;
}

// `text` padded on the left to `width` terminal columns (µ is two bytes but one column).
std::string right_aligned(const std::string& text, std::size_t width) {
  const std::size_t columns = display_width(text);
  return std::string(width > columns ? width - columns : 0, ' ') + text;
}

// One row per point that ran (ok, incorrect, error); skipped and not-supported points only counted, by reason.
void print_summary(const std::vector<PointRecord>& records) {
  std::printf("\n%-20s %-10s %11s %11s %9s %8s %-8s %s\n", "variant", "status", "time", "wall", "GB/s", "syncs/it",
              "bound", "axes");
  std::map<std::string, int> counts, not_run;
  for (const auto& r : records) {
    const std::string& status = r.status;
    counts[status]++;
    if (status != "ok" && status != "incorrect" && status != "error") {
      // One line per kind of reason: the part before "; this point" (the limit, not each point's own size).
      const std::string reason = r.reason.value_or("");
      not_run[status + ": " + reason.substr(0, std::min<std::size_t>(reason.find("; this point"), 110))]++;
      continue;
    }
    std::string time = "-", wall = "-", bw = "-", syncs = "-", bound = "-";
    if (r.timing) {
      time = fmt_time(r.timing->time_s);
      wall = fmt_time(r.timing->wall ? r.timing->wall->median_time_s : std::nan(""));
      syncs = fmt::format("{:.2f}", r.timing->host_syncs_per_iteration);
    }
    if (r.interpretation) {
      const Interpretation& in = *r.interpretation;
      if (std::isfinite(in.achieved_bandwidth_Bps)) bw = fmt::format("{:.1f}", in.achieved_bandwidth_Bps / 1e9);
      bound = in.suspect ? "SUSPECT" : in.bound.empty() ? "-" : in.bound;
    }
    std::printf("%-20s %-10s %s %s %9s %8s %-8s %s\n", r.variant.c_str(), status.c_str(),
                right_aligned(time, 11).c_str(), right_aligned(wall, 11).c_str(), bw.c_str(), syncs.c_str(),
                bound.c_str(), short_axes(r.axes).c_str());
    if (status != "ok" && r.reason) std::printf("    %s\n", r.reason->c_str());
  }
  for (const auto& [why, n] : not_run) std::printf("%6d x %s\n", n, why.c_str());
  std::string line;
  for (const auto& [s, c] : counts) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", c, s);
  std::printf("\n%zu points: %s\n", records.size(), line.c_str());
}

// "a.jsonl", "a.jsonl,b.jsonl" (shards) or a folder (every .jsonl in it, sorted).
std::vector<std::string> result_paths(const std::string& arg) {
  std::vector<std::string> out;
  if (std::filesystem::is_directory(arg)) {
    bool gzipped = false;
    for (const auto& e : std::filesystem::directory_iterator(arg)) {
      if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
      gzipped = gzipped || e.path().string().ends_with(".jsonl.gz");
    }
    if (out.empty())
      throw std::invalid_argument("folder '" + arg + "' holds no .jsonl result file" +
                                  (gzipped ? " (its .jsonl.gz files must be unpacked first: gunzip -k)" : ""));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = arg.find(',', start);
    out.push_back(arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty())
      throw std::invalid_argument("'" + arg + "': an empty file name in a comma-separated list of result files");
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Runs `argv` as a process of a pooled sweep: this executable again (/proc/self/exe; argv[0] is only a name),
// sent SIGTERM if this process dies first, so killing a pooled sweep never leaves a sweep running on the device.
// Returns its exit status, or 128 + the signal number if it was killed.
int run_child(const std::vector<std::string>& argv) {
  SpawnOptions o;
  o.program = "/proc/self/exe";
  o.die_with_parent = true;
  return run_process(argv, o);
}

// "I/K" of --process: this run is process I of K of a lab.processes sweep.
std::pair<int, int> parse_process(const std::string& text) {
  int i = 0, k = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &i, &slash, &k, &extra) != 3 || slash != '/' || i < 1 || k < 1 || i > k)
    throw std::invalid_argument("--process: expected I/K with 1 <= I <= K, got '" + text + "'");
  return {i, k};
}

// True for a result file's statuses that make a sweep exit 1.
bool any_failed(const std::vector<PointRecord>& records) {
  for (const auto& r : records)
    if (r.status == "incorrect" || r.status == "error") return true;
  return false;
}

// lab.processes: K child processes, one after another, each running the whole sweep into its own file in
// OUTPUT.processes/, then their records pooled point by point (src/processes.hpp) into OUTPUT. OUTPUT is
// created only once every process has finished and the pool is made, so a failed or killed run never leaves
// an empty or partial OUTPUT; the processes' files stay in OUTPUT.processes/ until the pool is written.
// Returns the exit status: a child's own status for bad input or device trouble (2-5), 70 if one was killed.
int run_pooled(const SweepConfig& config, const std::string& output, bool force, const std::vector<std::string>& args,
               const std::function<std::vector<std::string>(int, int, const std::string&)>& child_argv) {
  namespace fs = std::filesystem;
  const int k = static_cast<int>(config.lab.processes);
  const fs::path dir = output + ".processes";
  std::error_code ec;
  if (!force && fs::exists(output, ec))
    throw OutputError("output file " + output + " exists; labrun never overwrites results (use --force)");
  if (fs::exists(fs::symlink_status(dir, ec))) {
    if (!force)
      throw OutputError(dir.string() + " exists (the processes' files of an earlier pooled run?); labrun never "
                                       "overwrites results: move it away, or use --force to replace it");
    fs::remove_all(dir, ec);
  }
  if (!fs::create_directories(dir, ec) && !fs::is_directory(dir, ec))
    throw OutputError("cannot create " + dir.string() + ": " + ec.message());
  std::vector<Run> runs;
  for (int i = 1; i <= k; ++i) {
    const std::string part = (dir / fmt::format("process-{}-of-{}.jsonl", i, k)).string();
    std::fprintf(stderr, "labrun: process %d of %d (lab.processes)\n", i, k);
    const int rc = run_child(child_argv(i, k, part));
    if (rc != kExitOk && rc != kExitPointsFailed) {
      const bool empty = fs::is_empty(dir, ec);
      if (empty) fs::remove(dir, ec);
      const std::string kept = empty ? "" : "; the processes' files are kept in " + dir.string();
      if (rc > 128) {
        std::fprintf(stderr, "labrun: process %d of %d was killed by signal %d%s\n", i, k, rc - 128, kept.c_str());
        return kExitInternal;
      }
      std::fprintf(stderr, "labrun: process %d of %d exited with status %d%s\n", i, k, rc, kept.c_str());
      return rc;
    }
    ResultSet part_runs = load_results({part});  // the one loader: report, diff and pooling read alike
    if (part_runs.runs.size() != 1)
      throw std::runtime_error(part + ": expected one run (one header), found " + std::to_string(part_runs.runs.size()));
    runs.push_back(std::move(part_runs.runs.front()));
  }
  const Run pooled = pool_processes(runs, args, config.lab);
  JsonlWriter writer(output, force);
  writer.write(to_json(pooled.header));
  for (const auto& r : pooled.points) writer.write(to_json(r));
  fs::remove_all(dir, ec);
  print_summary(pooled.points);
  std::printf("results: %s (%d processes pooled)\n", output.c_str(), k);
  return any_failed(pooled.points) ? kExitPointsFailed : kExitOk;
}

Registry make_registry(const DeviceHooks& hooks) {
  Registry r;
  register_builtin(r);
  if (hooks.register_cuda) hooks.register_cuda(r);
  return r;
}

int cmd_list(const Registry& registry) {
  for (const auto& e : registry.experiments()) {
    std::printf("%s: %s\n  axes:\n", e.name.c_str(), e.description.c_str());
    for (const auto& a : e.axes) {
      std::string range;
      if (!a.choices.empty()) {
        for (const auto& c : a.choices) {
          if (!range.empty()) range += '|';
          range += c;
        }
      } else {
        range = fmt::format("{} in [{}, {}]", a.kind == AxisKind::Integer ? "integer" : "number",
                            a.min ? to_string(AxisValue(*a.min)) : "-inf", a.max ? to_string(AxisValue(*a.max)) : "inf");
      }
      std::printf("    %-12s %-32s default %-8s %s\n", a.name.c_str(), range.c_str(),
                  to_string(a.default_value).c_str(), a.description.c_str());
    }
    std::printf("  variants:\n");
    for (const auto& v : e.variants) {
      std::string backends;
      for (const auto& [k, fn] : v.implementations) {
        if (!backends.empty()) backends += ',';
        backends += to_string(k);
      }
      std::printf("    %-20s [%s] %s\n", v.name.c_str(), backends.c_str(), v.description.c_str());
    }
  }
  return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv, const DeviceHooks& hooks) {
  // Every argument goes into the record header (JSON, UTF-8): a byte that is not UTF-8 (a Latin-1 file name)
  // is bad command-line input, refused before anything is read or written.
  for (int i = 1; i < argc; ++i)
    if (const auto bad = first_invalid_utf8(argv[i])) {
      std::fprintf(stderr, "labrun: argument %d (byte %zu) is not valid UTF-8; labrun records its arguments as UTF-8\n",
                   i, *bad + 1);
      return kExitUsage;
    }
  CLI::App app{"labrun: GPU performance experiments with the measurement discipline built in"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_info().version + " (" + build_info().git_sha.substr(0, 12) +
                                        (build_info().git_dirty ? ", dirty" : "") + ", " + build_info().build_type + ")");
  std::string config_path, device = "auto", output, only, process;
  bool force = false, dry_run = false, quiet = false;

  auto* sweep = app.add_subcommand("sweep", "run every point of a sweep config through the lab pass");
  sweep->add_option("config", config_path, "sweep config (YAML, docs/config.md)")->required();
  sweep->add_option("--device", device, "auto (GPU if any, else host), cpu, cuda or cuda:N");
  sweep->add_option("-o,--output", output, "JSONL output (default results/<experiment>-<UTC time>.jsonl)");
  sweep->add_flag("--force", force, "overwrite the output file if it exists");
  sweep->add_flag("--dry-run", dry_run, "print the expanded points and their count; run nothing");
  sweep->add_option("--only", only, "run only points matching e.g. \"variant=index,n=1e7,density=0.7\"");
  sweep->add_flag("-q,--quiet", quiet, "no per-point progress on stderr");
  std::vector<std::string> lab_overrides;
  // One value per --lab (repeat the option for more), so it never swallows the config path after it.
  sweep->add_option("--lab", lab_overrides,
                    "override a lab setting, KEY=VALUE (repeatable), checked as under lab: (e.g. --lab processes=5)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // Internal: set by the parent of a lab.processes sweep on each child it starts.
  sweep->add_option("--process", process, "run as process I/K of a lab.processes sweep (set by labrun itself)")
      ->group("");

  auto* validate = app.add_subcommand("validate", "check a sweep config; run nothing");
  validate->add_option("config", config_path, "sweep config")->required();
  validate->add_option("--lab", lab_overrides, "check the config with these lab overrides too, KEY=VALUE (as sweep)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* list = app.add_subcommand("list", "list experiments, their axes and variants");

  std::string base_arg, new_arg, min_effect = "5%", format = "table", fail_on = "slower", alpha = "0.05";
  bool normalize = false;
  auto* diff = app.add_subcommand("diff", "compare two runs point by point (docs/diff.md); exit 1 on a regression");
  diff->add_option("base", base_arg, "base results: a .jsonl file, a comma-separated list (shards) or a folder")
      ->required();
  diff->add_option("new", new_arg, "new results, same forms")->required();
  diff->add_option("--min-effect", min_effect, "smallest change that counts, e.g. 5% (default) or 0.05");
  diff->add_option("--alpha", alpha, "false discovery rate over the whole diff (Benjamini-Hochberg): 0.05 (default) or 5%");
  diff->add_option("--format", format, "table (default), markdown or json");
  diff->add_option("--fail-on", fail_on, "slower (default) or any (also status changes)");
  diff->add_flag("--normalize", normalize, "compare times scaled by each run's calibrated copy bandwidth");

  std::vector<std::string> report_paths;
  std::string report_dir = "report";
  bool no_plots = false;
  auto* report = app.add_subcommand("report", "markdown + CSV + plots from result files (docs/metrics.md)");
  report->add_option("results", report_paths, "result files: .jsonl files, comma-separated lists or folders")->required();
  report->add_option("-o,--output", report_dir, "output folder (default ./report)");
  report->add_flag("--no-plots", no_plots, "skip the matplotlib plots");
  report->add_flag("--force", force, "replace an existing report in the output folder");
  auto* env = app.add_subcommand("env", "print the environment record as JSON");
  env->add_option("--device", device, "auto, cpu, cuda or cuda:N");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  std::vector<std::string> args(argv, argv + argc);
  try {
    if (*diff) {
      DiffOptions options;
      options.min_effect = parse_percent(min_effect);
      options.alpha = parse_percent(alpha);
      options.normalize = normalize;
      options.fail_on = parse_fail_on(fail_on);
      return cmd_diff(result_paths(base_arg), result_paths(new_arg), options, format, std::cout, std::cerr);
    }
    if (*report) {
      if (!force && std::filesystem::exists(std::filesystem::path(report_dir) / "report.md")) {
        std::fprintf(stderr, "labrun: %s already holds a report; labrun never overwrites results (use --force)\n",
                     report_dir.c_str());
        return kExitOutput;
      }
      ReportOptions options;
      options.plots = !no_plots;
      options.replace = force;
      std::vector<std::string> files;  // each argument: a file, a comma-separated list or a folder, as for diff
      for (const auto& arg : report_paths)
        for (auto& f : result_paths(arg)) files.push_back(std::move(f));
      return cmd_report(files, report_dir, std::cout, std::cerr, options);
    }
    Registry registry = make_registry(hooks);
    if (*list) return cmd_list(registry);
    if (*env) {
      auto backend = open_backend(device, hooks);
      Json e = host_environment();
      e["backend"] = backend->name();
      e["device"] = backend->environment();
      std::printf("%s\n", e.dump(2).c_str());
      return kExitOk;
    }
    SweepConfig config = load_config(config_path, registry);
    config.lab = apply_lab_overrides(config.lab, lab_overrides, registry);
    const Experiment& experiment = *registry.find(config.experiment);
    std::vector<Point> points = expand(config, experiment);
    if (!only.empty()) {
      points = filter_points(points, only);
      if (points.empty())
        throw std::invalid_argument("--only \"" + only + "\" matches none of the config's points (labrun sweep " +
                                    config_path + " --dry-run lists them)");
    }
    if (*validate) {
      std::printf("%s: valid; experiment %s, %zu points\n", config_path.c_str(), config.experiment.c_str(),
                  points.size());
      return kExitOk;
    }
    if (dry_run) {
      for (const auto& p : points) std::printf("%s  %-20s %s\n", p.id().c_str(), p.variant.c_str(), p.label().c_str());
      std::printf("%zu points\n", points.size());
      return kExitOk;
    }
    int process_index = 0, process_count = 0;  // this run is process I of K of a pooled sweep (K = 0: it is not)
    if (!process.empty()) std::tie(process_index, process_count) = parse_process(process);
    if (output.empty()) output = "results/" + config.experiment + "-" + utc_timestamp(true) + ".jsonl";
    if (config.lab.processes > 1 && process.empty())
      return run_pooled(config, output, force, args, [&](int i, int k, const std::string& part) {
        std::vector<std::string> child{args[0], "sweep", config_path, "--device", device, "-o", part, "--force",
                                       "--process", fmt::format("{}/{}", i, k)};
        if (!only.empty()) child.insert(child.end(), {"--only", only});
        for (const auto& o : lab_overrides) child.insert(child.end(), {"--lab", o});
        if (quiet) child.push_back("-q");
        return child;
      });
    auto backend = open_backend(device, hooks);
    JsonlWriter writer(output, force);
    std::fprintf(stderr, "labrun: %zu points on %s; writing %s\n", points.size(), backend->name().c_str(),
                 output.c_str());
    const Json calibration = backend->calibrate();
    Json header = make_header(config, args, *backend, calibration, points.size());
    if (process_count > 0) header["process"] = {{"index", process_index}, {"count", process_count}};
    writer.write(header);
    auto records = run_sweep(
        points, experiment, *backend, config.lab, header, [&](const PointRecord& rec) { writer.write(to_json(rec)); },
        [&](std::size_t i, std::size_t total, const PointRecord& rec) {
          if (quiet) return;
          std::string t = rec.timing ? fmt_time(rec.timing->time_s) : "";
          std::string reason = rec.reason.value_or("");
          if (reason.size() > 100) reason = reason.substr(0, 100) + "...";
          std::fprintf(stderr, "[%zu/%zu] %-20s %-40s %-19s %s %s\n", i, total, rec.variant.c_str(),
                       short_axes(rec.axes).c_str(), rec.status.c_str(), t.c_str(), reason.c_str());
        });
    if (process_count == 0) {  // a child of a pooled sweep leaves the summary to its parent
      print_summary(records);
      std::printf("results: %s\n", output.c_str());
    }
    return any_failed(records) ? kExitPointsFailed : kExitOk;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "labrun: invalid config: %s\n", e.what());
    return kExitConfig;
  } catch (const OutputError& e) {
    std::fprintf(stderr, "labrun: %s\n", e.what());
    return kExitOutput;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "labrun: %s\n", e.what());
    return kExitDevice;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "labrun: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "labrun: internal error: %s\n", e.what());
    return kExitInternal;
  }
}

}  // namespace labrun
