// The reference cache of a pooled sweep (src/lab/reference_cache.hpp): whole files keyed by everything a reference
// depends on, misses on a foreign or broken entry, and masking's InputCache reading another process's entry
// (an SDK experiment's scalar reference) instead of generating the inputs again.
#include "reference_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "masking/masking.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("labrun_refcache_" + std::to_string(std::random_device{}()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(ReferenceCache, DisabledHoldsNothing) {
  const ReferenceCache off("");
  EXPECT_FALSE(off.enabled());
  off.store("k", Json{{"sum", 1.0}});
  EXPECT_FALSE(off.load("k").has_value());
}

TEST(ReferenceCache, StoresWholeAndMissesOnAForeignOrBrokenEntry) {
  TempDir dir;
  const ReferenceCache cache((dir.path / "refs").string());  // created on the first store
  cache.store("masking/1000/0.5/f32/finite/7/k=0/abc", Json{{"sum", 2.5}});
  const auto hit = cache.load("masking/1000/0.5/f32/finite/7/k=0/abc");
  ASSERT_TRUE(hit.has_value());
  EXPECT_DOUBLE_EQ(hit->at("sum").get<double>(), 2.5);
  EXPECT_FALSE(cache.load("masking/1000/0.5/f32/finite/7/k=1/abc").has_value());
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "refs")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".json") << e.path();   // no sibling left behind
    std::ofstream(e.path()) << "{\"key\": \"masking/1000";  // torn
  }
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(cache.load("masking/1000/0.5/f32/finite/7/k=0/abc").has_value());
}

// A second process (a fresh SDK experiment: another registration) takes the first one's reference from the folder
// the environment names: an entry planted under the point's key is what it returns, so it read the disk rather
// than regenerating.
TEST(ReferenceCache, MaskingReadsAnotherProcesssReference) {
  TempDir dir;
  ::setenv(kReferenceCacheEnv, dir.path.c_str(), 1);
  const Point point{"masking",
                    "fused",
                    {{"n", std::int64_t{4096}},
                     {"density", 0.3},
                     {"dtype", std::string("f32")},
                     {"downstream", std::int64_t{2}},
                     {"nonfinite", std::string("none")},
                     {"mode", std::string("eager")}}};
  const Args p(point);
  auto process = [] {  // a fresh registration: its own inputs and references, as in another process
    auto registry = std::make_shared<Registry>();
    register_builtin(*registry);
    return sdk_experiment(*registry, "masking");
  };
  const auto first = process();
  const Reference computed = *first->reference(p, 99);
  const auto in = first->inputs(p, 99);
  const masking::Sums direct = masking::reference(in->arrays()["data"], in->arrays()["mask"], 2);
  EXPECT_DOUBLE_EQ(computed.value("sum"), direct.sum);
  EXPECT_EQ(computed.value("selected"), static_cast<double>(direct.selected));
  std::size_t files = 0;
  fs::path entry;
  for (const auto& e : fs::directory_iterator(dir.path)) ++files, entry = e.path();
  ASSERT_EQ(files, 1u);
  EXPECT_DOUBLE_EQ(process()->reference(p, 99)->value("sum"), computed.value("sum"));
  // Plant a different value under the same key: the next process returns it.
  std::ifstream is(entry);
  Json j = Json::parse(is);
  is.close();
  j["value"]["sum"] = 12345.0;
  std::ofstream(entry) << j.dump();
  EXPECT_DOUBLE_EQ(process()->reference(p, 99)->value("sum"), 12345.0);
  ::unsetenv(kReferenceCacheEnv);
}

}  // namespace
}  // namespace labrun
