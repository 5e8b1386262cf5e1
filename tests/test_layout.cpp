// The house rules a test can hold: src/ names no experiment (issue 11). Every experiment lives in its package
// (experiments/<name>/); the core, the device runtime and the report name none of them, none of their variants
// and none of their axes. Generic notions (a size axis, the lab axes mode and l2, a dtype) may stay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lab_axes.hpp"
#include "registry.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every source file under src/ (host core and device runtime).
std::vector<fs::path> core_sources() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LABRUN_SOURCE_DIR) / "src")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh") out.push_back(e.path());
  }
  return out;
}

// 1-based line of byte offset `at` in `text`.
std::size_t line_of(const std::string& text, std::size_t at) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// Names that are no English word (or a word no generic code would use), forbidden anywhere in src/, comments
// included: experiment names and the variants and axes whose names only an experiment would use.
bool distinctive(const std::string& name) {
  static const std::set<std::string> english = {"rank", "index", "where", "fused", "multiply", "sanitize",
                                                "online", "unfused", "n", "rows", "cols", "elements", "density",
                                                "dtype", "m", "batch", "steps", "n0", "n1", "heads", "layers",
                                                "seq", "causal", "cublas", "tiled", "layout"};
  return !english.count(name);
}

// Case 11 (issue): a test fails if src/ names an experiment or one of its variants or axes. Every name of
// every registered experiment, variant and (non-lab, non-dtype) axis is looked for in src/ as a string literal
// ("index", "n"); the distinctive ones (masking, gelu, index_device_count, downstream, ...) also as whole
// words anywhere.
TEST(Layout, SrcNamesNoExperiment) {
  std::set<std::string> names;
  for (const auto& e : test::builtin().experiments()) {
    names.insert(e.name);
    for (const auto& v : e.variants) names.insert(v.name);
    for (const auto& a : e.axes)
      if (!is_lab_axis(a.name) && a.name != "dtype") names.insert(a.name);
  }
  ASSERT_GE(names.size(), 20u);  // four experiments, their variants and axes
  std::vector<std::string> hits;
  for (const auto& file : core_sources()) {
    const std::string text = slurp(file);
    const std::string rel = fs::relative(file, LABRUN_SOURCE_DIR).string();
    for (const auto& name : names) {
      // Words of the record schema that an experiment also uses as an axis name (timing.batch, a history's
      // steps): the schema's key, not a name read from an experiment's points.
      static const std::set<std::string> schema_words = {"batch", "steps"};
      if (schema_words.count(name)) continue;
      for (std::size_t at = text.find("\"" + name + "\""); at != std::string::npos;
           at = text.find("\"" + name + "\"", at + 1)) {
        // A key written into a record ({"index", i} or emplace("index", i): a device's or process's index in
        // the schema) is the schema's word, not a name read from an experiment's points.
        std::size_t before = at;
        while (before > 0 && text[before - 1] == ' ') --before;
        const std::size_t after = at + name.size() + 2;
        if (before > 0 && (text[before - 1] == '{' || text[before - 1] == '(') && after < text.size() &&
            text[after] == ',')
          continue;
        hits.push_back(rel + ":" + std::to_string(line_of(text, at)) + ": string literal \"" + name + "\"");
      }
      if (!distinctive(name)) continue;
      const std::regex word("\\b" + name + "\\b", std::regex::icase);
      for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
        hits.push_back(rel + ":" + std::to_string(line_of(text, static_cast<std::size_t>(it->position()))) +
                       ": names '" + name + "'");
    }
  }
  std::string all;
  for (const auto& h : hits) all += "  " + h + "\n";
  EXPECT_TRUE(hits.empty()) << hits.size() << " places in src/ name an experiment, variant or axis:\n" << all;
}

// The checker itself: it finds a planted name (so an empty result above means something).
TEST(Layout, TheCheckerFindsAPlantedName) {
  const std::regex word("\\bmasking\\b", std::regex::icase);
  EXPECT_TRUE(std::regex_search(std::string("// the Masking section"), word));
  EXPECT_FALSE(std::regex_search(std::string("// unmaskingly"), word));
}

// Every experiment folder has its registration line, and every line of the table has its folder.
TEST(Layout, EveryExperimentIsOneFolderAndOneLine) {
  const std::string table = slurp(fs::path(LABRUN_SOURCE_DIR) / "experiments" / "experiments.def");
  std::set<std::string> listed;
  const std::regex line("^LABRUN_EXPERIMENT\\((\\w+)\\)", std::regex::multiline);
  for (auto it = std::sregex_iterator(table.begin(), table.end(), line); it != std::sregex_iterator(); ++it)
    listed.insert((*it)[1]);
  std::set<std::string> folders;
  for (const auto& e : fs::directory_iterator(fs::path(LABRUN_SOURCE_DIR) / "experiments"))
    if (e.is_directory() && e.path().filename() != "cuda") folders.insert(e.path().filename().string());
  EXPECT_EQ(listed, folders);
  std::set<std::string> registered;
  for (const auto& e : test::builtin().experiments()) registered.insert(e.name);
  EXPECT_EQ(registered, listed);
}

}  // namespace
}  // namespace labrun
