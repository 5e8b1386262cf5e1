// labrun history: the runs of each commit put in commit order (order_commits) and a series found by point.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history.hpp"
#include "merge.hpp"

namespace labrun {

namespace {

/// Where a header's code sha is read: environment.code.git_sha, or environment.labrun.git_sha in a header of
/// schema <= 2 (no environment.code: the code under test was labrun itself).
std::string code_sha_field(const RunHeader& h) {
  const Json* code = json_find(h.json, {"environment", "code"});
  return code != nullptr && code->is_object() ? "environment.code.git_sha" : "environment.labrun.git_sha";
}

}  // namespace

// ---- Ordering the commits -------------------------------------------------------------------------------------------

std::vector<CommitRuns> order_commits(std::vector<Run> runs, const std::vector<std::string>* rev_list) {
  std::vector<CommitRuns> commits;
  std::unordered_map<std::string, std::size_t> at;
  for (Run& run : runs) {
    if (!run.has_header)
      throw std::invalid_argument(run.file + ": no header: the first line is not a {\"type\": \"header\"} record");
    // The commit of the code under test (environment.code; a header of schema <= 2: labrun's own).
    std::string sha = run.header.code_sha();
    const std::string field = code_sha_field(run.header);
    if (sha.empty() || sha == "unknown")
      throw std::invalid_argument(run.file + ": " + field + " is " + (sha.empty() ? "missing" : "unknown") +
                                  ": the build's commit is not known, so the run has no place in a history " +
                                  (run.header.json.contains("import")
                                       ? std::string("(an imported run: labrun import ... --code-rev SHA)")
                                       : std::string("(a runner built without its repository: labrun sweep "
                                                     "--code-rev SHA)")));
    if (rev_list != nullptr) {
      std::string full;
      for (const auto& c : *rev_list)
        if (c == sha || (sha.size() >= 7 && c.rfind(sha, 0) == 0)) {
          full = c;
          break;
        }
      if (full.empty())
        throw std::invalid_argument(run.file + ": " + field + " " + sha +
                                    " is not a commit of the repository's history (git rev-list --topo-order HEAD)");
      sha = full;
    } else if (run.header.created_utc().empty()) {
      throw std::invalid_argument(run.file + ": created_utc is missing: without --repo runs are ordered by it");
    }
    const auto [it, inserted] = at.try_emplace(sha, commits.size());
    if (inserted) commits.push_back({sha, {}});
    commits[it->second].runs.push_back(std::move(run));
  }
  for (CommitRuns& c : commits) merge_shard_runs(c.runs);
  if (rev_list != nullptr) {
    std::unordered_map<std::string, std::size_t> position;  // 0 = newest
    for (std::size_t i = 0; i < rev_list->size(); ++i) position.emplace((*rev_list)[i], i);
    std::stable_sort(commits.begin(), commits.end(),
                     [&](const CommitRuns& a, const CommitRuns& b) { return position.at(a.sha) > position.at(b.sha); });
  } else {
    const auto first = [](const CommitRuns& c) {
      std::string t;
      for (const Run& r : c.runs)
        if (t.empty() || r.header.created_utc() < t) t = r.header.created_utc();
      return t;
    };
    std::stable_sort(commits.begin(), commits.end(),
                     [&](const CommitRuns& a, const CommitRuns& b) { return first(a) < first(b); });
  }
  return commits;
}

const HistorySeries* find_series(const HistoryResult& h, const std::string& point) {
  for (const auto& s : h.series)
    if (s.id == point || s.key == point) return &s;
  return nullptr;
}

}  // namespace labrun
