// Tests of sweep expansion (golden order, exclusions, defaulted axes), point identity (key, id) and the
// --only filter, against the real masking experiment from register_builtin.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "test_util.hpp"
#include <labrun/point.hpp>
#include "registry.hpp"
#include "sweep.hpp"

namespace labrun {
namespace {

using test::builtin;

const char* const kConfig =
    "experiment: masking\n"
    "axes:\n"
    "  n: [1, 2]\n"
    "  dtype: [f32, f16]\n"
    "variants: [multiply, index]\n"
    "exclude:\n"
    "  - {dtype: f16, n: [2]}\n";

const char* const kConfigReordered =
    "experiment: masking\n"
    "axes:\n"
    "  dtype: [f32, f16]\n"
    "  n: [1, 2]\n"
    "variants: [multiply, index]\n"
    "exclude:\n"
    "  - {dtype: f16, n: [2]}\n";

std::vector<Point> expand_text(const std::string& text) {
  const SweepConfig config = parse_config(text, "sweep.yaml", builtin());
  return expand(config, *builtin().find("masking"));
}

std::vector<std::pair<std::string, std::string>> variant_labels(const std::vector<Point>& points) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : points) out.emplace_back(p.variant, p.label());
  return out;
}

// The FNV-1a 64 definition written out independently of point.cpp.
std::string fnv_hex(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Golden order: first written axis slowest, variants innermost, defaulted axes after the written ones,
// and the excluded (f16, n=2) combination absent.
TEST(Sweep, GoldenExpansionOrderWithExclude) {
  const auto points = expand_text(kConfig);
  const std::string rest = ",density=0.5,downstream=0,nonfinite=none,mode=eager,l2=hot";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"multiply", "n=1,dtype=f32" + rest}, {"index", "n=1,dtype=f32" + rest},    {"multiply", "n=1,dtype=f16" + rest},
      {"index", "n=1,dtype=f16" + rest},    {"multiply", "n=2,dtype=f32" + rest}, {"index", "n=2,dtype=f32" + rest},
  };
  EXPECT_EQ(variant_labels(points), expected);
  for (const auto& p : points) EXPECT_EQ(p.experiment, "masking");
}

// Axis values keep their kinds: n is an exact integer, density a real, dtype a word.
TEST(Sweep, PointValuesHaveTheAxisKinds) {
  const auto points = expand_text(kConfig);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[4].integer("n"), 2);
  EXPECT_EQ(points[4].real("density"), 0.5);
  EXPECT_EQ(points[4].word("dtype"), "f32");
  EXPECT_EQ(points[4].integer("downstream"), 0);
  EXPECT_THROW(points[4].at("densty"), std::out_of_range);
}

// key() sorts axes by name; id() is the 16-hex-digit FNV-1a 64 of key().
TEST(Sweep, KeyIsSortedAndIdIsFnv1aOfKey) {
  const auto points = expand_text(kConfig);
  ASSERT_FALSE(points.empty());
  const Point& first = points.front();
  EXPECT_EQ(first.key(), "masking/multiply/density=0.5,downstream=0,dtype=f32,l2=hot,mode=eager,n=1,nonfinite=none");
  EXPECT_EQ(first.id(), fnv_hex(first.key()));
  for (const auto& p : points) {
    ASSERT_EQ(p.id().size(), 16u);
    EXPECT_EQ(p.id().find_first_not_of("0123456789abcdef"), std::string::npos) << p.id();
    EXPECT_EQ(p.id(), fnv_hex(p.key()));
    EXPECT_EQ(p.id(), Point(p).id());
  }
}

// fnv1a64 matches the published FNV-1a 64 test vectors (draft-eastlake-fnv): "" and "a", "foobar".
TEST(Sweep, Fnv1a64KnownVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

// Writing the axes in another order changes the expansion order but not any point's key or id.
TEST(Sweep, AxisOrderInConfigDoesNotChangeKeys) {
  const auto a = expand_text(kConfig);
  const auto b = expand_text(kConfigReordered);
  ASSERT_EQ(a.size(), b.size());
  std::set<std::string> keys_a, keys_b, ids_a, ids_b;
  for (const auto& p : a) {
    keys_a.insert(p.key());
    ids_a.insert(p.id());
  }
  for (const auto& p : b) {
    keys_b.insert(p.key());
    ids_b.insert(p.id());
  }
  EXPECT_EQ(keys_a, keys_b);
  EXPECT_EQ(ids_a, ids_b);
  EXPECT_EQ(keys_a.size(), a.size());
  EXPECT_EQ(b[2].label(), "dtype=f32,n=2,density=0.5,downstream=0,nonfinite=none,mode=eager,l2=hot");
  EXPECT_EQ(b[2].key(), a[4].key());
}

// filter_points keeps points equal on every term, numbers compared by value (1e0 == 1, 0.50 == 0.5).
TEST(Sweep, FilterPointsComparesNumbersByValue) {
  const auto points = expand_text(kConfig);
  const auto index_n1 = filter_points(points, "variant=index,n=1e0");
  ASSERT_EQ(index_n1.size(), 2u);
  EXPECT_EQ(index_n1[0].key(), "masking/index/density=0.5,downstream=0,dtype=f32,l2=hot,mode=eager,n=1,nonfinite=none");
  EXPECT_EQ(index_n1[1].key(), "masking/index/density=0.5,downstream=0,dtype=f16,l2=hot,mode=eager,n=1,nonfinite=none");
  EXPECT_EQ(filter_points(points, "density=0.50").size(), 6u);
  EXPECT_EQ(filter_points(points, "n=2.0").size(), 2u);
  EXPECT_EQ(filter_points(points, "dtype=f16").size(), 2u);
  // A value no point has is refused with the nearest one (case H19), not an empty filter.
  EXPECT_THROW(filter_points(points, "n=3"), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "variant=fused"), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "n=0x2"), std::invalid_argument);  // decimal only: strtod would read hex as 2
  EXPECT_THROW(filter_points(points, "n= 2"), std::invalid_argument);
  // Terms that each match some point but no point together: an empty filter (load_sweep says so).
  EXPECT_EQ(filter_points(points, "n=2,dtype=f16").size(), 0u);
}

// An unknown axis or a term that is not axis=value is std::invalid_argument.
TEST(Sweep, FilterPointsRejectsUnknownAxisAndMalformedTerms) {
  const auto points = expand_text(kConfig);
  EXPECT_THROW(filter_points(points, "densty=0.5"), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "variant=index,size=1"), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "n"), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "n="), std::invalid_argument);
  EXPECT_THROW(filter_points(points, "=1"), std::invalid_argument);
}

// An unwritten l2 axis takes lab.l2 as its default; a written l2 axis wins over lab.l2.
TEST(Sweep, LabL2IsTheDefaultOfAnUnwrittenL2Axis) {
  const auto cold = expand_text(std::string(kConfig) + "lab: {l2: cold}\n");
  ASSERT_EQ(cold.size(), 6u);
  for (const auto& p : cold) EXPECT_EQ(p.word("l2"), "cold") << p.label();
  const auto written = expand_text(
      "experiment: masking\naxes:\n  n: [1]\n  l2: [hot]\nvariants: [fused]\nlab: {l2: cold}\n");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].label(), "n=1,l2=hot,density=0.5,dtype=f32,downstream=0,nonfinite=none,mode=eager");
}

// A config for another experiment cannot be expanded against masking.
TEST(Sweep, ExpandRejectsAnotherExperiment) {
  SweepConfig config = parse_config(kConfig, "sweep.yaml", builtin());
  config.experiment = "other";
  EXPECT_THROW(expand(config, *builtin().find("masking")), std::invalid_argument);
}

}  // namespace
}  // namespace labrun
