// What `labrun history --bisect POINT` prints (history_bisect, history.hpp).
#include "history.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "spawn.hpp"

#include "history_text.hpp"
#include "output.hpp"

namespace labrun {
namespace {

using namespace history_text;
namespace fs = std::filesystem;

std::string history_bisect_unescaped(const HistoryResult& h, const std::string& point,
                                     const std::vector<std::string>* rev_list) {
  const HistorySeries* s = find_series(h, point);
  if (s == nullptr) throw std::invalid_argument("--bisect: no point has the id or key '" + point + "'");
  const std::size_t index = static_cast<std::size_t>(s - h.series.data());
  std::ostringstream out;
  std::size_t found = 0;
  for (const HistoryStep& st : h.steps) {
    if (st.series != index) continue;
    ++found;
    const std::string before = h.commits[st.before].sha, after = h.commits[st.after].sha;
    out << fmt::format("{} {}: {} {} [{}, {}] between {} (last commit before) and {} (first commit after){}\n", s->key,
                       s->id, to_string(st.kind), percent(st.ratio), percent(st.ci_low), percent(st.ci_high),
                       short_sha(before), short_sha(after),
                       st.environment ? " — environment"
                       : st.tool      ? " — tool (labrun changed)"
                                      : "");
    if (rev_list != nullptr) {
      const auto pa = std::find(rev_list->begin(), rev_list->end(), after);
      const auto pb = std::find(rev_list->begin(), rev_list->end(), before);
      if (pa != rev_list->end() && pb != rev_list->end() && pa < pb) {
        std::vector<std::string> between(pa + 1, pb);
        std::reverse(between.begin(), between.end());
        if (between.empty()) {
          out << "  no commit in between: the step is pinned to " << short_sha(after) << "\n";
        } else {
          out << fmt::format("  {} commit(s) still to test (oldest first):", between.size());
          for (std::size_t i = 0; i < between.size() && i < 20; ++i) out << " " << short_sha(between[i]);
          if (between.size() > 20) out << " ...";
          out << "\n";
          out << fmt::format("  git bisect start {} {}\n", after, before);
        }
      }
    } else {
      out << "  (give --repo DIR to list the commits still to test)\n";
    }
    const std::string config = h.commits[st.after].config_path.empty() ? "CONFIG" : h.commits[st.after].config_path;
    out << fmt::format(
        "  at each: labrun sweep {} --only \"{}\" -o history-bisect-$(git rev-parse --short HEAD).jsonl\n", config,
        axes_only(*s));
  }
  if (found == 0)
    out << fmt::format("{} {}: no step over {} commits: nothing to bisect\n", s->key, s->id, h.commits.size());
  return out.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_bisect(const HistoryResult& h, const std::string& point, const std::vector<std::string>* rev_list) {
  return printable(history_bisect_unescaped(h, point, rev_list), true);
}

}  // namespace labrun
