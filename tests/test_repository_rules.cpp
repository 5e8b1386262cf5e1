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
  static const std::set<std::string> english = {"rank",    "index",   "where",  "fused", "multiply", "sanitize",
                                                "online",  "unfused", "n",      "rows",  "cols",     "elements",
                                                "density", "dtype",   "m",      "batch", "steps",    "n0",
                                                "n1",      "heads",   "layers", "seq",   "causal",   "cublas",
                                                "tiled",   "layout",  "cudnn"};
  return !english.count(name);
}

// Case 11 (issue): a test fails if src/ names an experiment or one of its variants or axes. Every name of
// every registered experiment, variant and (non-lab, non-dtype) axis is looked for in src/ as a string literal
// ("index", "n"); the distinctive ones (masking, gelu, index_device_count, downstream, ...) also as whole
// words anywhere.
TEST(RepositoryRules, SrcNamesNoExperiment) {
  std::set<std::string> names, experiment_names;
  for (const auto& e : test::builtin().experiments()) {
    names.insert(e.name());
    experiment_names.insert(e.name());
    for (const auto& v : e.variants()) names.insert(v.name());
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
  for (const auto& e : test::builtin().experiments()) registered.insert(e.name());
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
    bool in_src = false;  // a header of src/, in any module folder (src/modules.txt)
    for (const auto& e : fs::recursive_directory_iterator(root / "src"))
      in_src = in_src || (e.is_directory() && fs::exists(e.path() / name));
    bool own_file = false;
    for (const fs::path& base : {file.parent_path(), own.parent_path()}) {
      const fs::path p = fs::weakly_canonical(base / name);
      const std::string ps = p.string(), os = fs::weakly_canonical(own).string();
      own_file = own_file || (fs::exists(p) && ps.compare(0, os.size(), os) == 0);
    }
    if ((!quoted && in_src) || (quoted && !own_file))
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
  {
    std::ofstream(dir / "x.cpp") << "#include <labrun/experiment.hpp>\n#include \"registry.hpp\"\n#include <vector>\n"
                                 << "#include <cuda_backend.hpp>\n";
  }
  const auto bad = private_includes(dir / "x.cpp", dir);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_NE(bad[0].find("registry.hpp"), std::string::npos);
  EXPECT_NE(bad[1].find("<cuda_backend.hpp>"), std::string::npos);  // in angle brackets, in src/backends/cuda/
  fs::remove_all(dir);
}

// ---- module dependencies (src/modules.txt) ----------------------------------------------------------------------

// The module table src/modules.txt under `root`, as CMakeLists.txt reads it (lines "name: deps", name in [a-z]+):
// each module and the modules its files may include (itself included). `order` gets the modules lowest first.
// Breaks of the table itself go to `bad`: a module listed as a dependency before it is defined (not below it), and a
// module without its folder.
std::map<std::string, std::set<std::string>> module_table(const fs::path& root, std::vector<std::string>& bad,
                                                          std::vector<std::string>* order = nullptr) {
  std::map<std::string, std::set<std::string>> allowed;
  std::ifstream in(root / "src" / "modules.txt");
  const std::regex line_re(R"(^([a-z]+):(.*)$)");
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
    if (!fs::is_directory(root / "src" / module))
      bad.push_back("src/modules.txt:" + std::to_string(n) + ": module " + module + " has no folder src/" + module);
    allowed[module] = deps;
    if (order) order->push_back(module);
  }
  return allowed;
}

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".h" || ext == ".cc" ||
         ext == ".inl";
}

// The module of a file under root/src: the first folder below src/ ("" for a file directly in src/; ".." for a
// file outside src/).
std::string module_of(const fs::path& root, const fs::path& file) {
  const fs::path rel = fs::weakly_canonical(file).lexically_relative(fs::weakly_canonical(root / "src"));
  if (rel.empty() || *rel.begin() == "..") return "..";
  return std::distance(rel.begin(), rel.end()) > 1 ? rel.begin()->string() : "";
}

// Where an include of `name` from `file` finds a file of src/, as the compiler's search would with every module
// folder on the path: the includer's folder (quoted includes only), then the folders of the modules `file` may
// include in the table's order, then any other folder of src/ (an include the compiler of that module would not
// find: a break). Empty when src/ holds no such file.
fs::path resolve_in_src(const fs::path& root, const fs::path& file, const std::string& name, bool quoted,
                        const std::vector<std::string>& search) {
  if (quoted && fs::exists(file.parent_path() / name)) return fs::weakly_canonical(file.parent_path() / name);
  for (const auto& module : search) {
    if (!fs::is_directory(root / "src" / module)) continue;  // a table module without its folder: reported there
    for (const auto& e : fs::recursive_directory_iterator(root / "src" / module))
      if (e.is_directory() && fs::exists(e.path() / name)) return fs::weakly_canonical(e.path() / name);
  }
  for (const auto& e : fs::recursive_directory_iterator(root / "src"))
    if (e.is_directory() && fs::exists(e.path() / name)) return fs::weakly_canonical(e.path() / name);
  return {};
}

// Whether `#include "name"` from `file` is a file in the includer's own folder (not one reached through "../").
bool is_sibling(const fs::path& file, const std::string& name) {
  const fs::path target = file.parent_path() / name;
  return fs::exists(target) && fs::weakly_canonical(target).parent_path() == fs::weakly_canonical(file.parent_path());
}

// How many includes layering_violations read under each root.
struct IncludesRead {
  std::size_t src = 0, public_headers = 0, kernels = 0;
};

// Every include that breaks the layering under `root`, as "file:line: what":
// - a src/ file including (quoted or in angle brackets) a header of src/ that belongs to a module its own may not
//   include, a file outside src/ by a relative path, a quoted name that is no file of src/, or kernels/;
// - a public header (include/labrun/) including anything of labrun but another public header;
// - kernels/ including a header of src/ or a quoted file not its own.
// main.cpp, directly in src/, is the top and may include every module.
std::vector<std::string> layering_violations(const fs::path& root, IncludesRead* read = nullptr) {
  std::vector<std::string> bad;
  std::vector<std::string> order;
  const auto allowed = module_table(root, bad, &order);
  IncludesRead count;
  const std::regex include_re(R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
  auto each_include = [&](const fs::path& folder, std::size_t& counter, auto&& check) {
    if (!fs::exists(folder)) return;
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
      if (!is_source(e.path())) continue;
      std::ifstream in(e.path());
      std::size_t n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        ++counter;
        const std::string where = fs::relative(e.path(), root).string() + ":" + std::to_string(n) + ": ";
        check(e.path(), m[1] == "<", m[2].str(), where);
      }
    }
  };
  each_include(root / "src", count.src,
               [&](const fs::path& file, bool angle, const std::string& name, const std::string& at) {
    const std::string module = module_of(root, file);
    if (angle && name.rfind("labrun/", 0) == 0) {
      if (name.rfind("labrun/kernels/", 0) == 0) bad.push_back(at + "src/ includes kernels/ (<" + name + ">)");
      return;  // a public header
    }
    if (!module.empty() && !allowed.count(module)) {
      bad.push_back(at + "src/" + module + " is not a module of src/modules.txt");
      return;
    }
    std::vector<std::string> search;
    for (const auto& m : order)
      if (module.empty() || allowed.at(module).count(m)) search.push_back(m);
    const fs::path target = resolve_in_src(root, file, name, !angle, search);
    if (target.empty()) {
      if (!angle) bad.push_back(at + "\"" + name + "\" is no file of src/");
      return;  // <name>: a system or third-party header
    }
    const std::string owner = module_of(root, target);
    if (owner == ".." || owner.empty()) {
      if (!module.empty()) bad.push_back(at + module + " includes \"" + name + "\", outside the module folders");
      return;
    }
    if (!module.empty() && !allowed.at(module).count(owner))
      bad.push_back(at + module + " includes \"" + name + "\" of " + owner + ", above it in src/modules.txt");
  });
  auto private_header = [&](const std::string& name) {
    return !resolve_in_src(root, root / "src" / "main.cpp", name, false, order).empty();
  };
  each_include(root / "include" / "labrun", count.public_headers,
               [&](const fs::path& file, bool angle, const std::string& name, const std::string& at) {
    bool ok = true;
    if (!angle) ok = is_sibling(file, name);
    else if (name.rfind("labrun/", 0) == 0)
      ok = fs::exists(root / "include" / name) && name.rfind("labrun/kernels/", 0) != 0;
    else ok = !private_header(name);
    if (!ok) bad.push_back(at + "a public header includes \"" + name + "\", which is not a public header");
  });
  each_include(root / "kernels", count.kernels,
               [&](const fs::path& file, bool angle, const std::string& name, const std::string& at) {
    const bool ok = angle ? name.rfind("labrun/", 0) == 0 || !private_header(name) : is_sibling(file, name);
    if (!ok) bad.push_back(at + "kernels/ includes \"" + name + "\", which is neither its own nor public");
  });
  if (read) *read = count;
  return bad;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& b : lines) all += "  " + b + "\n";
  return all;
}

// src/ holds main.cpp and the module folders of src/modules.txt (and the table and its README), and every include
// of src/, include/labrun/ and kernels/ keeps the layers.
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
  IncludesRead read;
  for (auto& b : layering_violations(root, &read)) bad.push_back(std::move(b));
  // Not a pass by reading nothing: the tree has hundreds of includes in src/, a few dozen in the public headers.
  EXPECT_GE(read.src, 500u);
  EXPECT_GE(read.public_headers, 20u);
  EXPECT_GE(read.kernels, 5u);
  EXPECT_TRUE(bad.empty()) << bad.size() << " breaks of the module layering:\n" << joined(bad);
}

// A planted tree: each kind of break is found, and the allowed includes are not: a lower module including a higher
// one (quoted, in angle brackets, from a nested folder such as backends/cuda), a relative path out of the module
// folders, a public header or kernels/ reaching a private header, and a table naming a module below its user.
TEST(RepositoryRules, TheLayeringCheckerFindsALowerModuleIncludingAHigherOne) {
  test::TempDir dir("labrun-layers");
  const fs::path root = dir.path();
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("src/modules.txt", "base:\nstats: base\nbackends: base stats\nhistory: base stats\n");
  write("src/base/base.hpp", "#include <vector>\n#include <labrun/point.hpp>\n");
  write("src/stats/stats.hpp", "#include \"base.hpp\"\n#include <base.hpp>\n");
  write("src/backends/cuda/dev.cuh", "#include \"stats.hpp\"\n");
  write("src/history/history.hpp", "#include \"stats.hpp\"\n#include \"base.hpp\"\n");
  write("src/main.cpp", "#include \"history.hpp\"\n#include \"dev.cuh\"\n");
  write("include/labrun/point.hpp", "#include <string>\n#include \"status.hpp\"\n");
  write("include/labrun/status.hpp", "#include <cstdint>\n");
  write("kernels/vec.cuh", "#include <labrun/point.hpp>\n#include <cuda_runtime.h>\n");
  IncludesRead read;
  EXPECT_TRUE(layering_violations(root, &read).empty()) << joined(layering_violations(root));
  EXPECT_EQ(read.src, 9u);
  EXPECT_EQ(read.public_headers, 3u);
  EXPECT_EQ(read.kernels, 2u);

  write("src/base/bad.cpp", "#include \"base.hpp\"\n#include \"history.hpp\"\n");
  auto bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 1u) << joined(bad);
  EXPECT_EQ(bad[0], "src/base/bad.cpp:2: base includes \"history.hpp\" of history, above it in src/modules.txt");

  write("src/base/bad.cpp", "#include <history.hpp>\n");
  write("src/backends/cuda/dev.cuh", "#include \"history.hpp\"\n");
  write("src/stats/up.cpp", "#include \"../../kernels/vec.cuh\"\n");
  bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_NE(joined(bad).find("src/base/bad.cpp:1: base includes \"history.hpp\" of history"), std::string::npos);
  EXPECT_NE(joined(bad).find("src/backends/cuda/dev.cuh:1: backends includes \"history.hpp\" of history"),
            std::string::npos);
  EXPECT_NE(joined(bad).find("src/stats/up.cpp:1: stats includes \"../../kernels/vec.cuh\", outside"),
            std::string::npos);

  fs::remove(root / "src/base/bad.cpp");
  fs::remove(root / "src/stats/up.cpp");
  write("src/backends/cuda/dev.cuh", "#include \"stats.hpp\"\n");
  write("include/labrun/point.hpp", "#include <string>\n#include \"../../src/base/base.hpp\"\n#include <stats.hpp>\n");
  write("kernels/vec.cuh", "#include \"stats.hpp\"\n#include <base.hpp>\n");
  write("src/modules.txt", "base: stats\nstats: base\nbackends: base stats\nhistory: base stats\nghost: base\n");
  bad = layering_violations(root);
  ASSERT_EQ(bad.size(), 6u) << joined(bad);
  EXPECT_NE(bad[0].find("src/modules.txt:1: base may include stats"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("src/modules.txt:5: module ghost has no folder"), std::string::npos) << bad[1];
  EXPECT_NE(joined(bad).find("a public header includes \"../../src/base/base.hpp\""), std::string::npos);
  EXPECT_NE(joined(bad).find("a public header includes \"stats.hpp\""), std::string::npos);
  EXPECT_NE(joined(bad).find("kernels/ includes \"stats.hpp\""), std::string::npos);
  EXPECT_NE(joined(bad).find("kernels/ includes \"base.hpp\""), std::string::npos);
}

}  // namespace
}  // namespace labrun
