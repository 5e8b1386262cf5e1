// Continuing a result file: what it holds, whether this run may continue it, and the command that resumes an
// interrupted sweep (src/run/sweep_driver.hpp, docs/records.md "Workers and resume").
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "build_info.hpp"
#include "code_rev.hpp"
#include "format.hpp"
#include "log.hpp"
#include "output_file.hpp"
#include "sweep_parts.hpp"

namespace labrun::sweep_detail {

// Every point of `file`, each once, in file order (all its segments).
std::vector<PointRecord> points_of(const std::string& file) {
  std::vector<PointRecord> out;
  for (auto& run : load_results({file}).runs)
    for (auto& p : run.points) out.push_back(std::move(p));
  return out;
}

// The header of a result file that is to be continued. @throws std::invalid_argument (exit 2) when it is not a
// labrun result file of one run with a header first and each point once, or load_results refuses it (FILE:LINE:
// ...); Interrupted on a signal while it is read.
RunHeader header_to_continue(const std::string& file) {
  ResultSet set;
  try {
    set = load_results({file});
  } catch (const ResultError& e) {
    throw std::invalid_argument("cannot resume " + file + ": " + e.what());
  }
  if (set.runs.empty() || !set.runs.front().has_header)
    throw std::invalid_argument("cannot resume " + file + ": it does not start with a labrun header");
  // A file to continue is one run: each point once, under its one header (a point kept twice, or a second run
  // appended, would be written back as if it were this sweep's).
  if (!set.first_duplicate.empty())
    throw std::invalid_argument("cannot resume " + file + ": " + set.first_duplicate +
                                "; a resumed file holds each point once");
  if (set.runs.size() > 1)
    throw std::invalid_argument("cannot resume " + file + ": it holds " + std::to_string(set.runs.size()) +
                                " runs (a second header follows the first run); a resumed file holds one run");
  return set.runs.front().header;
}

// A mismatch between the file to continue and this run, as "its X is A, this run's is B".
void check_same(std::vector<std::string>& mismatches, const char* what, const std::string& file_value,
                const std::string& run_value) {
  if (file_value != run_value)
    mismatches.push_back(fmt::format("its {} is {}, this run's {}", what, file_value.empty() ? "(none)" : file_value,
                                     run_value.empty() ? "(none)" : run_value));
}

// Refuses to continue `file` over `mismatches`, or with `force` continues and says what differs (the segment
// line records this run's config hash and lab settings).
void refuse_mismatch(const std::string& file, const std::vector<std::string>& mismatches, bool force) {
  if (mismatches.empty()) return;
  std::string all;
  for (const auto& m : mismatches) all += (all.empty() ? "" : "; ") + m;
  if (force) {
    spdlog::warn("resuming {} despite a mismatch (--force): {}", file, all);
    return;
  }
  throw OutputError("cannot resume " + file + ": it holds another run (" + all +
                    "); --resume --force continues it anyway, -o another file starts afresh");
}

// The supervisor's check before continuing `file`: the same config bytes, lab settings, code under test (project,
// commit, dirty flag) and labrun version.
void check_resumable(const std::string& file, const SweepConfig& config, bool force) {
  const RunHeader h = header_to_continue(file);
  // Not a mismatch --force may accept: the points of another experiment cannot join this file's run (a reader then
  // refuses the file: "experiment: B, but the header of this run is of experiment A").
  if (!h.experiment().empty() && h.experiment() != config.experiment)
    throw OutputError("cannot resume " + printable(file) + ": it holds a run of experiment " +
                      printable(h.experiment()) + " and the config is of experiment " + config.experiment +
                      " (a result of a runner with other experiments, or of another config?); even --force cannot "
                      "put two experiments in one run: -o another file starts afresh");
  std::vector<std::string> m;
  check_same(m, "config sha256", h.config_sha256(), config.sha256);
  // The settings that differ, by name, rather than both objects.
  const Json now = to_json(config.lab);
  for (const auto& [key, value] : now.items())
    if (!h.lab().contains(key) || h.lab()[key] != value)
      check_same(m, ("lab." + key).c_str(), h.lab().contains(key) ? h.lab()[key].dump() : "", value.dump());
  // The code under test (a header of schema <= 2: labrun's own commit, RunHeader::code_sha) and the tool.
  const CodeRev code = code_rev();
  check_same(m, "code under test", h.code_project(), code.project);
  check_same(m, "code commit", h.code_sha(), code.git_sha);
  const auto dirty = h.code_dirty();
  check_same(m, "code dirty flag", dirty ? (*dirty ? "true" : "false") : "", code.git_dirty ? "true" : "false");
  check_same(m, "labrun version", h.labrun_version(), build_info().version);
  refuse_mismatch(file, m, force);
}

}  // namespace labrun::sweep_detail

namespace labrun {
namespace {

// Shell quoting for a word of the resume command: bare when it is safe, else in single quotes.
std::string shell_word(const std::string& w) {
  const bool safe = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("@%+=:,./-_", c);
  });
  if (safe) return w;
  // A control character (a newline, ESC) in single quotes would reach the terminal raw, or escaped by the log as
  // text that names another file when pasted: bash's $'...' spells it \xHH, which names the same bytes.
  if (std::any_of(w.begin(), w.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    std::string out = "$'";
    for (unsigned char c : w) {
      if (c == '\'' || c == '\\') out += std::string("\\") + static_cast<char>(c);
      else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
      else out += static_cast<char>(c);
    }
    return out + "'";
  }
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

namespace sweep_detail {

void print_interrupted(int signal, std::size_t finished, std::size_t total, const std::string& where,
                       const std::vector<std::string>& argv, const std::string& output) {
  spdlog::warn("interrupted by SIG{}: {} of {} points finished, kept in {}",
               sigabbrev_np(signal) ? sigabbrev_np(signal) : "?", finished, total, where.c_str());
  spdlog::warn("resume with: {}", resume_command(argv, output).c_str());
}

}  // namespace sweep_detail

std::string resume_command(const std::vector<std::string>& argv, const std::string& output) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "--force" || w == "--resume") continue;
    if (w == "-o" || w == "--output") {
      ++i;
      continue;
    }
    if (w.rfind("--output=", 0) == 0 || (w.rfind("-o", 0) == 0 && w.size() > 2)) continue;
    out += (out.empty() ? "" : " ") + shell_word(w);
  }
  return out + " -o " + shell_word(output) + " --resume";
}

}  // namespace labrun
