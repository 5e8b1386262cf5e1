// The house rules a test can hold: src/ names no experiment (issue 11). Every experiment lives in its package
// (experiments/<name>/); the core, the device runtime and the report name none of them, none of their variants
// and none of their axes. Generic notions (a size axis, the lab axes mode and l2, a dtype) may stay, and so may
// ordinary English words an experiment happens to use as a name (a variant called `block`). An experiment on the
// SDK includes only labrun's public headers (include/labrun/) and its own files. src/ is layered by module
// (src/modules.txt): no module includes one above it, the public headers include only each other, and kernels/ only
// public headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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

// The system dictionary (/usr/share/dict/words, Debian's wamerican, installed by scripts/setup.sh), lower-cased;
// empty where it is missing.
const std::set<std::string>& dictionary() {
  static const std::set<std::string> words = [] {
    std::set<std::string> w;
    std::ifstream in("/usr/share/dict/words");
    for (std::string line; std::getline(in, line);) {
      std::transform(line.begin(), line.end(), line.begin(), [](unsigned char c) { return std::tolower(c); });
      w.insert(line);
    }
    return w;
  }();
  return words;
}

// Names that are no English word (or a word no generic code would use), forbidden anywhere in src/, comments
// included: experiment names (always, but for the two that are everyday words of generic code) and the variants
// and axes whose names only an experiment would use. A variant or axis named by a dictionary word (`block`,
// `warp`, `naive`) is ordinary: src/ may use the word; as a string literal it is still forbidden.
bool distinctive(const std::string& name, bool experiment_name = false) {
  if (experiment_name) return name != "rank" && name != "layout";
  if (dictionary().count(name)) return false;
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
TEST(RepositoryRules, SrcNamesNoExperiment) {
  std::set<std::string> names, experiment_names;
  for (const auto& e : test::builtin().experiments()) {
    names.insert(e.name);
    experiment_names.insert(e.name);
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
      if (!distinctive(name, experiment_names.count(name) > 0)) continue;
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
TEST(RepositoryRules, TheCheckerFindsAPlantedName) {
  const std::regex word("\\bmasking\\b", std::regex::icase);
  EXPECT_TRUE(std::regex_search(std::string("// the Masking section"), word));
  EXPECT_FALSE(std::regex_search(std::string("// unmaskingly"), word));
}

// A name an experiment may use that src/ also uses as an everyday word: `block` (a variant of examples/rownorm)
// is ordinary, `masking` and `index_device_count` are not.
TEST(RepositoryRules, OrdinaryWordsAreAllowedAsNames) {
  if (dictionary().empty()) GTEST_SKIP() << "no /usr/share/dict/words (scripts/setup.sh installs wamerican)";
  EXPECT_FALSE(distinctive("block"));
  EXPECT_FALSE(distinctive("warp"));
  EXPECT_TRUE(distinctive("index_device_count"));
  EXPECT_TRUE(distinctive("fused_vec"));
  EXPECT_TRUE(distinctive("masking", true));
  EXPECT_FALSE(distinctive("rank", true));
}

// The experiments on the SDK: a LABRUN_EXPERIMENT(NAME) in a source of experiments/NAME/.
std::set<std::string> sdk_experiments() {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LABRUN_SOURCE_DIR) / "experiments")) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = slurp(e.path());
    const std::string folder = e.path().parent_path().filename().string();
    if (text.find("LABRUN_EXPERIMENT(" + folder + ")") != std::string::npos) out.insert(folder);
  }
  return out;
}

// Every experiment folder registers itself with its own LABRUN_EXPERIMENT, and nothing else is registered.
TEST(RepositoryRules, EveryExperimentIsOneFolderAndOneRegistration) {
  const std::set<std::string> all = sdk_experiments();
  std::set<std::string> folders;
  for (const auto& e : fs::directory_iterator(fs::path(LABRUN_SOURCE_DIR) / "experiments"))
    if (e.is_directory()) folders.insert(e.path().filename().string());
  EXPECT_EQ(all, folders);
  std::set<std::string> registered;
  for (const auto& e : test::builtin().experiments()) registered.insert(e.name);
  EXPECT_EQ(registered, folders);
  EXPECT_EQ(folders.size(), 9u);
}

// The include lines of a source that break the public-headers rule: a quoted include that is not a file of
// `own` (the experiment's folder), or any include that names a labrun header outside include/labrun/.
std::vector<std::string> private_includes(const fs::path& file, const fs::path& own) {
  std::vector<std::string> bad;
  const std::string text = slurp(file);
  const std::regex inc("^#include ([<\"])([^>\"]+)[>\"]", std::regex::multiline);
  const fs::path root(LABRUN_SOURCE_DIR);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), inc); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[2];
    const bool quoted = (*it)[1] == "\"";
    const bool in_src = fs::exists(root / "src" / name) || fs::exists(root / "src" / "device" / name);
    bool own_file = false;
    for (const fs::path& base : {file.parent_path(), own.parent_path()}) {
      const fs::path p = fs::weakly_canonical(base / name);
      const std::string ps = p.string(), os = fs::weakly_canonical(own).string();
      own_file = own_file || (fs::exists(p) && ps.compare(0, os.size(), os) == 0);
    }
    if (in_src || (quoted && !own_file))
      bad.push_back(fs::relative(file, root).string() + ":" + std::to_string(line_of(text, it->position())) +
                    ": #include " + (quoted ? "\"" + name + "\"" : "<" + name + ">"));
  }
  return bad;
}

// An experiment on the SDK, and the example a user copies, include only <labrun/...> and their own files.
TEST(RepositoryRules, SdkExperimentsIncludeOnlyPublicHeaders) {
  std::vector<fs::path> folders;
  for (const auto& name : sdk_experiments()) folders.push_back(fs::path(LABRUN_SOURCE_DIR) / "experiments" / name);
  folders.push_back(fs::path(LABRUN_SOURCE_DIR) / "examples" / "rownorm");
  std::vector<std::string> bad;
  std::size_t files = 0;
  for (const auto& folder : folders)
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh") continue;
      ++files;
      for (auto& b : private_includes(e.path(), folder)) bad.push_back(std::move(b));
    }
  EXPECT_GE(files, 5u);
  std::string all;
  for (const auto& b : bad) all += "  " + b + "\n";
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes of labrun's private headers:\n" << all;
}

// The checker finds a private include (so an empty result above means something).
TEST(RepositoryRules, TheIncludeCheckerFindsAPrivateHeader) {
  const fs::path dir = fs::temp_directory_path() / "labrun-include-check";
  fs::create_directories(dir);
  { std::ofstream(dir / "x.cpp") << "#include <labrun/experiment.hpp>\n#include \"registry.hpp\"\n#include <vector>\n"; }
  const auto bad = private_includes(dir / "x.cpp", dir);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("registry.hpp"), std::string::npos);
  fs::remove_all(dir);
}

// ---- module dependencies (src/modules.txt) ----------------------------------------------------------------------

// The table src/modules.txt under `root`: each module and the modules its files may include (itself included), in
// the table's order, lowest first. A listed module that is not above the one that names it is a violation too (the
// table must be layered): it is returned in `bad`.
std::map<std::string, std::set<std::string>> module_table(const fs::path& root, std::vector<std::string>& bad) {
  std::map<std::string, std::set<std::string>> allowed;
  std::ifstream in(root / "src" / "modules.txt");
  const std::regex line_re(R"(^([a-z_]+):(.*)$)");
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    const std::string module = m[1];
    std::set<std::string> deps{module};
    std::istringstream words(m[2].str());
    for (std::string dep; words >> dep;) {
      if (!allowed.count(dep))
        bad.push_back("src/modules.txt:" + std::to_string(n) + ": " + module + " may include " + dep +
                      ", which is not a module listed above it");
      deps.insert(dep);
    }
    allowed[module] = deps;
  }
  return allowed;
}

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh";
}

// The module of a file under root/src: the first folder below src/ ("" for a file directly in src/).
std::string module_of(const fs::path& root, const fs::path& file) {
  const fs::path rel = fs::relative(file, root / "src");
  return std::distance(rel.begin(), rel.end()) > 1 ? rel.begin()->string() : "";
}

// Where `#include "name"` from `file` resolves among labrun's own files, as the compiler's quote search does: the
// includer's folder, then every module folder of src/ (and src/backends/cuda). Empty when it is none of them.
fs::path resolve_quoted(const fs::path& root, const fs::path& file, const std::string& name) {
  if (fs::exists(file.parent_path() / name)) return fs::weakly_canonical(file.parent_path() / name);
  for (const auto& e : fs::recursive_directory_iterator(root / "src"))
    if (e.is_directory() && fs::exists(e.path() / name)) return fs::weakly_canonical(e.path() / name);
  return {};
}

// Whether `#include "name"` from `file` is a file in the includer's own folder (not one reached through "../").
bool is_sibling(const fs::path& file, const std::string& name) {
  const fs::path target = file.parent_path() / name;
  return fs::exists(target) && fs::weakly_canonical(target).parent_path() == fs::weakly_canonical(file.parent_path());
}

// Every include that breaks the layering under `root`, as "file:line: what": a src/ file including a header of a
// module its own may not include (or one labrun does not have), src/ including kernels/, a public header
// (include/labrun/) including anything of labrun but another public header, kernels/ including a private header.
// main.cpp, directly in src/, is the top and may include every module.
std::vector<std::string> layering_violations(const fs::path& root) {
  std::vector<std::string> bad;
  const auto allowed = module_table(root, bad);
  const std::regex include_re(R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
  auto each_include = [&](const fs::path& folder, auto&& check) {
    if (!fs::exists(folder)) return;
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
      if (!is_source(e.path())) continue;
      std::ifstream in(e.path());
      std::size_t n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string where = fs::relative(e.path(), root).string() + ":" + std::to_string(n) + ": ";
        check(e.path(), m[1] == "<", m[2].str(), where);
      }
    }
  };
  each_include(root / "src", [&](const fs::path& file, bool angle, const std::string& name, const std::string& at) {
    const std::string module = module_of(root, file);
    if (angle) {
      if (name.rfind("labrun/kernels/", 0) == 0) bad.push_back(at + "src/ includes kernels/ (<" + name + ">)");
      return;  // a public header or a system one
    }
    if (!module.empty() && !allowed.count(module)) {
      bad.push_back(at + "src/" + module + " is not a module of src/modules.txt");
      return;
    }
    const fs::path target = resolve_quoted(root, file, name);
    if (target.empty()) {
      bad.push_back(at + "\"" + name + "\" is no file of src/");
      return;
    }
    const std::string owner = module_of(root, target);
    if (!module.empty() && !allowed.at(module).count(owner))
      bad.push_back(at + module + " includes \"" + name + "\" of " + owner + ", above it in src/modules.txt");
  });
  each_include(root / "include" / "labrun", [&](const fs::path& file, bool angle, const std::string& name,
                                                const std::string& at) {
    const bool labrun = angle ? name.rfind("labrun/", 0) == 0 : true;
    if (!labrun) return;
    const bool ok = angle ? fs::exists(root / "include" / name) && name.rfind("labrun/kernels/", 0) != 0
                          : is_sibling(file, name);
    if (!ok) bad.push_back(at + "a public header includes \"" + name + "\", which is not a public header");
  });
  each_include(root / "kernels", [&](const fs::path& file, bool angle, const std::string& name,
                                     const std::string& at) {
    if (angle) return;  // <labrun/...> public, or a system header
    if (!is_sibling(file, name)) bad.push_back(at + "kernels/ includes \"" + name + "\", not its own");
  });
  return bad;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& b : lines) all += "  " + b + "\n";
  return all;
}

// src/ holds main.cpp and the module folders of src/modules.txt, nothing else, and every include keeps the layers.
TEST(RepositoryRules, IncludesFollowTheModuleTable) {
  const fs::path root(LABRUN_SOURCE_DIR);
  std::vector<std::string> bad;
  const auto allowed = module_table(root, bad);
  EXPECT_GE(allowed.size(), 10u);
  for (const auto& e : fs::directory_iterator(root / "src")) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && !allowed.count(name)) bad.push_back("src/" + name + "/ is not in src/modules.txt");
    if (!e.is_directory() && name != "main.cpp" && name != "modules.txt" && name != "README.md")
      bad.push_back("src/" + name + " lies directly in src/ (only main.cpp may)");
  }
  for (auto& b : layering_violations(root)) bad.push_back(std::move(b));
  EXPECT_TRUE(bad.empty()) << bad.size() << " breaks of the module layering:\n" << joined(bad);
}

// A planted tree: a lower module including a higher one, a public header including a private one, kernels/ including
// src/, and a table naming a module below its user are each found, and the allowed includes are not.
TEST(RepositoryRules, TheLayeringCheckerFindsALowerModuleIncludingAHigherOne) {
  test::TempDir dir("labrun-layers");
  const fs::path root = dir.path();
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("src/modules.txt", "base:\nstats: base\nhistory: base stats\n");
  write("src/base/base.hpp", "#include <vector>\n#include <labrun/point.hpp>\n");
  write("src/stats/stats.hpp", "#include \"base.hpp\"\n");
  write("src/history/history.hpp", "#include \"stats.hpp\"\n#include \"base.hpp\"\n");
  write("src/main.cpp", "#include \"history.hpp\"\n");
  write("include/labrun/point.hpp", "#include <string>\n");
  write("kernels/vec.cuh", "#include <labrun/point.hpp>\n");
  EXPECT_TRUE(layering_violations(root).empty()) << joined(layering_violations(root));

  write("src/base/bad.cpp", "#include \"base.hpp\"\n#include \"history.hpp\"\n");
  auto bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 1u) << joined(bad);
  EXPECT_EQ(bad[0], "src/base/bad.cpp:2: base includes \"history.hpp\" of history, above it in src/modules.txt");

  fs::remove(root / "src/base/bad.cpp");
  write("include/labrun/point.hpp", "#include <string>\n#include \"../../src/base/base.hpp\"\n");
  write("kernels/vec.cuh", "#include \"stats.hpp\"\n");
  write("src/modules.txt", "base: stats\nstats: base\nhistory: base stats\n");
  bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_NE(bad[0].find("src/modules.txt:1: base may include stats"), std::string::npos) << bad[0];
  EXPECT_NE(joined(bad).find("a public header includes"), std::string::npos);
  EXPECT_NE(joined(bad).find("kernels/ includes \"stats.hpp\""), std::string::npos);
}

}  // namespace
}  // namespace labrun
