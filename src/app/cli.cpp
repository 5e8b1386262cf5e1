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
#include "code_rev.hpp"
#include "config.hpp"
#include "diff.hpp"
#include "history.hpp"
#include "interrupt.hpp"
#include "env.hpp"
#include "interpret.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "point_record.hpp"
#include "processes.hpp"
#include "record.hpp"
#include "report.hpp"
#include <labrun/status.hpp>
#include "format.hpp"
#include "log.hpp"
#include "merge_cli.hpp"
#include "output_file.hpp"
#include "profiler.hpp"
#include "shard.hpp"
#include "slurm.hpp"
#include "standard_output.hpp"
#include "sweep_command.hpp"
#include "sweep.hpp"

namespace labrun {

namespace {

// "a.jsonl", "a.jsonl,b.jsonl" (shards) or a folder (every .jsonl in it, sorted).
std::vector<std::string> result_paths(const std::string& arg) {
  std::vector<std::string> out;
  std::error_code ec;  // a symlink loop or a name too long is the reader's to report (exit 2), not a throw here
  if (std::filesystem::is_directory(arg, ec)) {
    bool gzipped = false;
    for (const auto& e : std::filesystem::directory_iterator(arg, ec)) {
      if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
      gzipped = gzipped || e.path().string().ends_with(".jsonl.gz");
    }
    if (ec) throw std::invalid_argument("cannot list folder " + arg + ": " + ec.message());
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
    refuse_partial_input(out.back());  // FILE.new-PID: a write that was interrupted (src/output_file.hpp)
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// A count on the command line (--max-plots): digits only. CLI11's NonNegativeNumber said "not in range [0 -
// 1.79769e+308]" in 309 digits, and "-1" must not wrap to the largest size_t (case H10).
CLI::Validator count_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return "";
        return "must be a non-negative integer (0, 1, 2, ...), got '" + text + "'";
      },
      "COUNT");
}

Registry make_registry(const DeviceHooks& hooks) {
  Registry r;
  register_builtin(r);
  if (hooks.register_cuda) hooks.register_cuda(r);
  if (hooks.register_extra) hooks.register_extra(r);
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
  // Every message goes to std::cerr, escaped there (src/log.hpp): a value echoed from the command line, a file or a
  // config never reaches the terminal raw.
  escape_standard_error();
  watch_standard_output();  // the reason of a failed write to standard output is kept (src/standard_output.hpp)
  for (int i = 1; i < argc; ++i)
    if (const auto bad = first_invalid_utf8(argv[i])) {
      std::cerr << fmt::format("labrun: argument {} (byte {}) is not valid UTF-8; labrun records its arguments as UTF-8\n",
                               i, *bad + 1);
      return kExitUsage;
    }
  // --lab takes one KEY=VALUE per occurrence: `--lab seed -1` would otherwise hand "-1" to the positional config
  // and blame the real config as unexpected. Said plainly before parsing.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool joined = a.rfind("--lab=", 0) == 0;
    if (a != "--lab" && !joined) continue;
    const std::string value = joined ? a.substr(6) : (i + 1 < argc ? argv[i + 1] : "");
    if (value.find('=') == std::string::npos) {
      // Exit 3 as every other bad --lab value (it is checked as the same key under lab:).
      std::cerr << "labrun: invalid config: --lab takes KEY=VALUE, one setting per --lab; got '" << value << "'"
                << (!value.empty() && value[0] != '-' && !joined && i + 2 < argc
                        ? " (for the value " + std::string(argv[i + 2]) + ": --lab " + value + "=" + argv[i + 2] + ")"
                        : std::string())
                << "\n";
      return kExitConfig;
    }
  }
  CLI::App app{"labrun: GPU performance experiments with the measurement discipline built in"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_info().version + " (" + build_info().git_sha.substr(0, 12) +
                                        (build_info().git_dirty ? ", dirty" : "") + ", " + build_info().build_type + ")");
  // The sweep's options are parsed straight into its arguments; validate, env and report share some of them.
  SweepArgs sweep_args;
  std::string &config_path = sweep_args.config_path, &device = sweep_args.device, &output = sweep_args.output,
              &only = sweep_args.only, &process = sweep_args.process, &worker = sweep_args.worker;
  bool &force = sweep_args.force, &quiet = sweep_args.quiet, &resume = sweep_args.resume;
  int& status_fd = sweep_args.status_fd;
  bool dry_run = false;
  bool profile = false;

  auto* sweep = app.add_subcommand("sweep", "run every point of a sweep config through the lab pass");
  sweep->add_option("config", config_path, "sweep config (YAML, docs/config.md)")->required();
  sweep->add_option("--device", device, "auto (GPU if any, else host), cpu, cuda or cuda:N");
  sweep->add_option("-o,--output", output, "JSONL output (default results/<experiment>-<UTC time>.jsonl)");
  sweep->add_flag("--force", force, "replace the output file if it exists (kept until the new run has a point)");
  sweep->add_flag("--resume", resume,
                  "continue the output file: keep its points, run the rest (same config, labrun build, GPU model and "
                  "driver; --force accepts a mismatch)");
  sweep->add_flag("--dry-run", dry_run, "print the expanded points and their count; run nothing");
  sweep->add_flag("--profile", profile,
                  "profiler mode, for ncu/nsys: correctness, then 3 plain iterations per point in NVTX ranges named by "
                  "its key (= --lab profile=true; on by itself under a profiler; docs/profiling.md)");
  sweep->add_option("--only", only, "run only points matching e.g. \"variant=index,n=1e7,density=0.7\"");
  sweep->add_flag("-q,--quiet", quiet, "no per-point progress on stderr, and only warnings and errors in the log");
  bool verbose = false;
  std::string log_level_arg;
  sweep->add_flag("-v,--verbose", verbose, "debug messages in the log too");
  sweep->add_option("--log-level", log_level_arg, "trace, debug, info (default), warn, error or off");
  sweep->add_option("--shard", sweep_args.shard,
                    "run shard I of N: a balanced, deterministic subset of the points (docs/cluster.md)");
  sweep->add_option("--devices", sweep_args.devices,
                    "one worker per GPU (0,1,2,3 or all), pinned with CUDA_VISIBLE_DEVICES, merged at the end");
  std::vector<std::string>& lab_overrides = sweep_args.lab_overrides;
  // One value per --lab (repeat the option for more), so it never swallows the config path after it.
  sweep->add_option("--lab", lab_overrides,
                    "override a lab setting, KEY=VALUE (repeatable), checked as under lab: (e.g. --lab processes=5)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sweep->add_option("--code-rev", sweep_args.code_rev,
                    "the commit of the code under test, SHA[+dirty], for a runner built without its repository "
                    "(overrides LABRUN_CODE_REV and the build's; recorded in environment.code)");
  // Internal: set by the parent of a lab.processes sweep on each child it starts.
  sweep->add_option("--process", process, "run as process I/K of a lab.processes sweep (set by labrun itself)")
      ->group("");
  // Internal: set by the supervisor on each worker it starts (src/supervisor.hpp).
  sweep->add_option("--worker", worker, "run as a worker: fresh or continue (set by labrun itself)")->group("");
  sweep->add_option("--status-fd", status_fd, "the worker's status pipe (set by labrun itself)")->group("");

  auto* validate = app.add_subcommand("validate", "check a sweep config; run nothing");
  validate->add_option("config", config_path, "sweep config")->required();
  validate->add_option("--lab", lab_overrides, "check the config with these lab overrides too, KEY=VALUE (as sweep)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* list = app.add_subcommand("list", "list experiments, their axes and variants");

  std::vector<std::string> merge_paths;
  std::string merge_output;
  bool allow_mixed_builds = false;
  auto* merge = app.add_subcommand("merge", "merge the shards of one sweep (--shard I/N) into one result file");
  merge->add_option("shards", merge_paths, "shard files, comma-separated lists or folders")->required();
  merge->add_option("-o,--output", merge_output, "the merged result file")->required();
  merge->add_flag("--force", force, "replace the output file if it exists");
  merge->add_flag("--allow-mixed-builds", allow_mixed_builds,
                  "merge shards of different labrun builds (each listed; report and diff warn)");

  SlurmPlan slurm_plan;
  std::string slurm_dir = "slurm";
  bool submit = false;
  auto* slurm = app.add_subcommand("slurm", "write (and --submit) a Slurm job array of the sweep's shards and a merge job");
  slurm->add_option("config", config_path, "sweep config")->required();
  slurm->add_option("--shards", slurm_plan.shards, "array tasks, one shard each")->required()->check(CLI::Range(1, kMaxShards));
  slurm->add_option("--partition", slurm_plan.partition, "Slurm partition");
  slurm->add_option("--gpus-per-task", slurm_plan.gpus_per_task, "GPUs per array task (0: none, host backend)")
      ->check(CLI::Range(0, 64));
  slurm->add_option("--time", slurm_plan.time, "time limit per task, as sbatch --time takes it");
  slurm->add_option("--account", slurm_plan.account, "Slurm account");
  slurm->add_option("--array-limit", slurm_plan.array_limit, "at most K tasks at once (--array=...%K)")
      ->check(CLI::Range(0, 100000));
  slurm->add_option("--device", slurm_plan.device, "the tasks' --device (default auto)");
  slurm->add_option("-o,--output", slurm_dir, "folder for the scripts, shards, logs and merged file (default ./slurm)");
  slurm->add_option("--only", only, "as for sweep: every task runs only the matching points");
  slurm->add_option("--lab", lab_overrides, "as for sweep, KEY=VALUE, passed to every task")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  slurm->add_option("--code-rev", sweep_args.code_rev, "as for sweep, SHA[+dirty], passed to every task");
  slurm->add_flag("--submit", submit, "run sbatch for both and print the job ids");
  slurm->add_flag("--force", force, "replace the scripts of an earlier labrun slurm in the -o folder");

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

  HistoryArgs history_args;
  std::vector<std::string> history_paths;
  std::string history_min_effect = "2%", history_alpha = "0.05", history_fail_on = "slower";
  auto* history = app.add_subcommand(
      "history", "find the commits where points' times stepped, over runs of many commits (docs/history.md)");
  history->add_option("results", history_paths, "result files of many commits: .jsonl files, comma-separated lists or folders")
      ->required();
  history->add_option("--repo", history_args.repo, "order the commits as git rev-list --topo-order HEAD in this repository");
  history->add_option("--format", history_args.format, "table (default), markdown or json");
  history->add_option("--fail-on-newest", history_fail_on, "exit 1 on a step at the newest commit: slower (default) or any");
  history->add_option("--bisect", history_args.bisect, "print the commits still to test for this point (id or key)");
  history->add_option("-o,--output", history_args.report_dir, "also write a report folder: history.md, history.json, plots");
  history->add_flag("--force", history_args.force, "replace an earlier history report in the -o folder");
  history->add_option("--min-effect", history_min_effect, "smallest step reported, e.g. 2% (default) or 0.02");
  history->add_option("--alpha", history_alpha, "false discovery rate over the points' steps: 0.05 (default)");
  history->add_option("--max-plots", history_args.max_plots, "draw at most this many group plots (default 16)")
      ->check(count_validator());

  std::vector<std::string> report_paths;
  std::string report_dir = "report";
  bool no_plots = false;
  auto* report = app.add_subcommand("report", "markdown + CSV + plots from result files (docs/metrics.md)");
  report->add_option("results", report_paths, "result files: .jsonl files, comma-separated lists or folders")->required();
  report->add_option("-o,--output", report_dir, "output folder (default ./report)");
  report->add_flag("--no-plots", no_plots, "skip the matplotlib plots");
  std::size_t max_plots = ReportOptions{}.max_plots;
  report->add_option("--max-plots", max_plots, "draw at most this many time plots (0: all; rooflines always)")
      ->capture_default_str()
      ->check(count_validator());
  report->add_flag("--force", force, "replace an existing report in the output folder");
  auto* env = app.add_subcommand("env", "print the environment record as JSON");
  env->add_option("--device", device, "auto, cpu, cuda or cuda:N");
  env->add_option("--code-rev", sweep_args.code_rev, "the commit of the code under test, SHA[+dirty] (as sweep)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  std::vector<std::string> args(argv, argv + argc);
  try {
    init_logging(!log_level_arg.empty() ? log_level_arg : verbose ? "debug" : quiet ? "warn" : "info");
    // The code under test (src/code_rev.hpp): --code-rev, else LABRUN_CODE_REV, else the build's. A malformed
    // value is bad input before anything runs.
    if (*sweep || *env) {
      set_code_rev_option(sweep_args.code_rev);
      code_rev();
    }
    if (*diff) {
      DiffOptions options;
      options.min_effect = parse_percent(min_effect);
      options.alpha = parse_percent(alpha);
      options.normalize = normalize;
      options.fail_on = parse_fail_on(fail_on);
      return cmd_diff(result_paths(base_arg), result_paths(new_arg), options, format, std::cout, std::cerr);
    }
    if (*history) {
      history_args.options.min_effect = parse_percent(history_min_effect);
      history_args.options.alpha = parse_percent(history_alpha);
      history_args.options.alpha_history = std::min(history_args.options.alpha_history, history_args.options.alpha);
      history_args.options.fail_on = parse_history_fail_on(history_fail_on);
      for (const auto& arg : history_paths)
        for (auto& f : result_paths(arg)) history_args.paths.push_back(std::move(f));
      return cmd_history(history_args, std::cout, std::cerr);
    }
    if (*report) {
      ReportOptions options;
      options.plots = !no_plots;
      options.max_plots = max_plots;
      options.replace = force;
      std::vector<std::string> files;  // each argument: a file, a comma-separated list or a folder, as for diff
      for (const auto& arg : report_paths)
        for (auto& f : result_paths(arg)) files.push_back(std::move(f));
      return cmd_report(files, report_dir, std::cout, std::cerr, options);
    }
    Registry registry = make_registry(hooks);
    if (*list) return cmd_list(registry);
    if (*merge) {
      std::vector<std::string> files;
      for (const auto& arg : merge_paths)
        for (auto& f : result_paths(arg)) files.push_back(std::move(f));
      return cmd_merge(files, merge_output, force, allow_mixed_builds, registry);
    }
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
    // The backend kind sharding and --dry-run estimate for, and whose lab section applies: the host for --device
    // cpu, a build without CUDA, or --device auto where no CUDA device is visible (as the worker will find).
    const BackendKind kind =
        device == "cpu" || device == "host" || !hooks.open_cuda ||
                (device == "auto" && hooks.device_count && hooks.device_count() <= 0)
            ? BackendKind::host
            : BackendKind::cuda;
    if (const auto it = config.lab_by_backend.find(to_string(kind)); it != config.lab_by_backend.end())
      config.lab = apply_lab_overrides(it->second, lab_overrides, registry);
    // Profiler mode: asked for, or found under a profiler (said once, by the supervisor; its workers and
    // processes inherit it through --lab, as every lab override).
    if (*sweep && !config.lab.profile && worker.empty() && process.empty()) {
      const auto tool = profiler_detected();
      if (profile || tool) {
        if (!profile)
          std::cerr << fmt::format("labrun: running under {}: profiler mode (--profile): each point's correctness "
                                   "check, then {} plain iterations in NVTX ranges named by its key; no blocking kernel, "
                                   "calibration, adaptive sampling or time limit (docs/profiling.md)\n",
                                   *tool, kProfileIterations);
        lab_overrides.push_back("profile=true");
        config.lab.profile = true;
      }
    }
    config.lab = profile_settings(config.lab);
    if (*slurm) {
      namespace fs = std::filesystem;
      slurm_plan.labrun = fs::read_symlink("/proc/self/exe").string();
      slurm_plan.config = fs::absolute(config_path).lexically_normal().string();
      slurm_plan.config_sha = config.sha256;
      slurm_plan.experiment = config.experiment;
      slurm_plan.dir = fs::absolute(slurm_dir).lexically_normal().string();
      if (!only.empty()) slurm_plan.extra.insert(slurm_plan.extra.end(), {"--only", only});
      if (!sweep_args.code_rev.empty()) slurm_plan.extra.insert(slurm_plan.extra.end(), {"--code-rev", sweep_args.code_rev});
      for (const auto& o : lab_overrides) slurm_plan.extra.insert(slurm_plan.extra.end(), {"--lab", o});
      return cmd_slurm(slurm_plan, submit, force);
    }
    if (!sweep_args.shard.empty()) {
      points = shard_points(points, experiment, config.lab, parse_shard(sweep_args.shard), kind);
    }
    if (*validate) {
      std::printf("%s: valid; experiment %s, %zu points\n", config_path.c_str(), config.experiment.c_str(),
                  points.size());
      return kExitOk;
    }
    if (dry_run) {
      // Each point with the estimate sharding balances by (src/shard.hpp), and their sum per process.
      double total_s = 0;
      for (const auto& p : points) {
        const double t = estimated_point_time_s(p, experiment, config.lab, kind);
        total_s += t;
        std::printf("%s  %-20s %-9s %s\n", p.id().c_str(), p.variant.c_str(), format_time(t).c_str(), p.label().c_str());
      }
      std::printf("%zu points, estimated %s per process on the %s backend\n", points.size(), format_time(total_s).c_str(),
                  to_string(kind));
      return kExitOk;
    }
    sweep_args.argv = args;
    return cmd_sweep(sweep_args, config, experiment, points, hooks);
  } catch (const ConfigError& e) {
    std::cerr << "labrun: invalid config: " << e.what() << "\n";
    return kExitConfig;
  } catch (const OutputError& e) {
    std::cerr << "labrun: " << e.what() << "\n";
    return kExitOutput;
  } catch (const DeviceError& e) {
    std::cerr << "labrun: " << e.what() << "\n";
    return kExitDevice;
  } catch (const std::invalid_argument& e) {
    std::cerr << "labrun: " << e.what() << "\n";
    return kExitUsage;
  } catch (const Interrupted& e) {  // a signal while a result file was read (sweep --resume's check)
    std::cerr << "labrun: interrupted by SIG" << (sigabbrev_np(e.signal()) ? sigabbrev_np(e.signal()) : "?")
              << " while reading a result file\n";
    return 128 + e.signal();
  } catch (const std::exception& e) {
    std::cerr << "labrun: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace labrun
