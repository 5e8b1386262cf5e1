// `labrun merge -o OUT SHARD...`: the shards of one sweep (files or folders) into one result file, by the rules of
// plan_merge() (src/cluster/merge.hpp), which report and diff read shards by too. Streamed: each shard is read once for
// its header and its points' ids, and the points' lines are then copied in order, so memory holds ids and
// offsets, never the points (a cluster's 100,000-point result merges in a few hundred MB). add_merge_command
// adds its options.
#include "cmd_merge.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "format.hpp"
#include "interrupt.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "output.hpp"
#include "output_table.hpp"
#include "sweep.hpp"

namespace labrun {

namespace {

namespace fs = std::filesystem;

// One shard file as the merge reads it: header, segments, and where each point's line is.
struct ShardFile {
  std::string path;
  std::optional<RunHeader> header;
  std::vector<Json> segments;
  struct Line {
    std::uint64_t offset = 0, length = 0;
  };
  std::vector<Line> lines;  // points, in file order (ShardView::points has their ids)
};

// One record of a shard, by its type, checked as load_results() checks it; the caller adds file and line to a
// ResultError.
void scan_record(Json& r, ShardFile::Line at, ShardFile& f, ShardView& view) {
  const std::string type = r.is_object() && r.contains("type") && r["type"].is_string() ? r["type"].get<std::string>()
                                                                                        : "";
  if (type == "header") {
    if (f.header) throw ResultError("a second header: " + f.path + " holds more than one run, not one shard");
    RunHeader h = header_from_json(r);
    check_header(h);
    f.header = std::move(h);
  } else if (type == "segment") {
    f.segments.push_back(std::move(r));
  } else if (type == "point") {
    if (!f.header)
      throw ResultError(
          "a point before any header: a labrun result file starts with its header line (is this a "
          "labrun result file?)");
    const PointRecord p = point_from_json(r);  // checked as every reader checks it
    check_point(p);
    check_point_of_run(p, *f.header);
    view.points.emplace_back(p.id, p.key);
    f.lines.push_back(at);
  }
}

// Reads one shard: its header, segments and the offsets of its points' lines (RecordLines' bounds; a signal stops
// it with Interrupted). @throws ResultError naming the file and line.
ShardFile scan(const std::string& path, ShardView& view, std::vector<std::string>& warnings) {
  ShardFile f;
  f.path = path;
  view.file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ResultError("cannot read " + printable(path) + ": a folder in a list of shards");
  RecordLines in(path);
  for (std::string line; in.next(line);) {
    throw_if_interrupted();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(in.line_number());
    std::optional<Json> parsed = parse_line_or_torn(line, in.unterminated(), where, warnings);
    if (!parsed) break;
    try {
      scan_record(*parsed, {in.offset(), line.size()}, f, view);
    } catch (const ResultError& e) {
      throw ResultError(where + ": " + e.what());
    }
  }
  return f;
}

// Each point's position in the serial sweep when this build can expand the header's config; empty otherwise.
std::unordered_map<std::string, std::size_t> sweep_positions(const RunHeader& header, const Registry& registry) {
  std::unordered_map<std::string, std::size_t> position;
  try {
    const Json& config = header.json["config"];
    const SweepConfig c = parse_config(config["text"].get<std::string>(), config["path"].get<std::string>(), registry);
    if (const RegisteredExperiment* e = registry.find(c.experiment)) {
      std::size_t i = 0;
      for (const Point& p : expand(c, *e)) position.emplace(p.id(), i++);
    }
  } catch (const std::exception&) {
    position.clear();  // an experiment or config this build cannot read: the shard order stays
  }
  return position;
}

// cmd_merge without its handling of signals.
int merge_files(const std::vector<std::string>& shards, const std::string& output, bool force, bool allow_mixed_builds,
                const Registry& registry) {
  // A regular file only, one writer (a second merge onto OUT is refused), stale partial files removed
  // (src/base/output_file.hpp); held until OUT is renamed into place. An OUT that holds no result is replaced only once
  // the shards were found good: a refused merge leaves it as it was.
  const FileClaim claim(output, "labrun merge");
  std::vector<ShardFile> files;
  std::vector<ShardView> views;
  MergePlan plan;
  try {
    std::vector<std::string> warnings;
    for (const auto& path : shards) {
      ShardView view;
      files.push_back(scan(path, view, warnings));
      views.push_back(std::move(view));
    }
    for (std::size_t k = 0; k < files.size(); ++k) views[k].header = files[k].header ? &*files[k].header : nullptr;
    for (const auto& w : warnings) std::cerr << "labrun merge: warning: " << w << "\n";
    MergeOptions options;
    options.allow_mixed_builds = allow_mixed_builds;
    plan = plan_merge(views, options);
  } catch (const ResultError& e) {
    std::cerr << "labrun merge: " << e.what() << "; nothing written\n";
    return kExitUsage;
  }
  // The points in the serial sweep's order (so the merged file reads as a serial run's), else shard by shard.
  struct Entry {
    std::size_t shard, line, position;
  };
  std::vector<Entry> entries;
  const auto position = sweep_positions(*files.front().header, registry);
  for (const std::size_t k : plan.order)
    for (std::size_t i = 0; i < files[k].lines.size(); ++i) {
      const auto it = position.find(views[k].points[i].first);
      entries.push_back({k, i, it == position.end() ? SIZE_MAX : it->second});
    }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.position < b.position; });

  write_beside_then_rename(output, force || claim.replace_empty(), [&](const std::string& sibling) {
    JsonlWriter w(sibling, false);
    OutputArgs args;
    args.file = &w;
    const std::unique_ptr<Output> out = find_output(Product::records, "jsonl")->make(args);
    out->line(plan.header);
    for (const std::size_t k : plan.order)
      for (const Json& seg : files[k].segments) out->line(seg);
    std::vector<std::ifstream> in(files.size());
    std::string buffer;
    for (const Entry& e : entries) {
      throw_if_interrupted();  // write_beside_then_rename removes the sibling: nothing is written
      std::ifstream& f = in[e.shard];
      if (!f.is_open()) f.open(files[e.shard].path, std::ios::binary);
      const auto& line = files[e.shard].lines[e.line];
      buffer.resize(line.length);
      if (!f.seekg(static_cast<std::streamoff>(line.offset)) ||
          !f.read(buffer.data(), static_cast<std::streamsize>(line.length)))
        throw OutputError("cannot read " + printable(files[e.shard].path) + " again (did it change during the merge?)");
      out->text_line(buffer);  // the shard's line, byte for byte
    }
    w.sync();
    throw_if_interrupted();  // a Ctrl-C during the last lines or the fsync: the sibling goes, nothing is written
  });
  const Json& list = plan.header["shards"];
  std::printf("labrun merge: %zu points from %zu shards -> %s\n", entries.size(), list.size(),
              printable(output).c_str());
  for (const Json& s : list)  // the shards' words as their files give them: shown escaped (case H10)
    std::printf("  shard %s: %s points on %s %s (%s)\n", s.value("index", Json()).dump().c_str(),
                s["points"].dump().c_str(),
                printable(s["hostname"].is_string() ? s["hostname"].get<std::string>() : "?").c_str(),
                printable(s["backend"].get<std::string>()).c_str(), printable(s["device"].get<std::string>()).c_str());
  return kExitOk;
}

}  // namespace

int cmd_merge(const std::vector<std::string>& shards, const std::string& output, bool force, bool allow_mixed_builds,
              const Registry& registry) {
  // Ctrl-C or SIGTERM stops the reading or the copying, and nothing is written.
  return run_interruptible("merge", [&] { return merge_files(shards, output, force, allow_mixed_builds, registry); });
}

namespace {

/// The merge command's options as parsed.
struct MergeCommandOptions {
  std::vector<std::string> paths;  ///< as given: files, comma-separated lists or folders
  std::string output;
  bool force = false;
  bool allow_mixed_builds = false;
};

}  // namespace

Command add_merge_command(CLI::App& app, const CommandContext& context) {
  auto o = std::make_shared<MergeCommandOptions>();
  CLI::App* merge = app.add_subcommand("merge", "merge the shards of one sweep (--shard I/N) into one result file");
  merge->add_option("shards", o->paths, "shard files, comma-separated lists or folders")->required();
  merge->add_option("-o,--output", o->output, "the merged result file")->required();
  merge->add_flag("--force", o->force, "replace the output file if it exists");
  merge->add_flag("--allow-mixed-builds", o->allow_mixed_builds,
                  "merge shards of different labrun builds (each listed; report and diff warn)");
  return {merge,
          [o, &context] {
    const Registry registry = make_registry(context.hooks);
    return cmd_merge(result_paths(o->paths), o->output, o->force, o->allow_mixed_builds, registry);
          },
          {}};
}

}  // namespace labrun
