// Tests of the experiment SDK's own rules (labrun/experiment.hpp: src/sdk/experiment.cpp, src/lab/sdk_registry.cpp)
// that no experiment exercises: an incomplete definition is refused at registration with what is missing, and a check
// of an output that does not exist names the outputs there are; a returned output (Role::returned) and its same_buffer
// check; a comparison of chosen elements (Compare::elementwise_at) that still requires every other element to be
// finite; an output's poison byte (Layout::poison) and the chunked exact comparison (Layout::chunked,
// Compare::exact_chunks); the re-check's set made ahead (SdkExperiment::prefetch).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <labrun/experiment.hpp>

#include "sdk_registry.hpp"

namespace labrun {
namespace {

ExperimentDef complete() {
  ExperimentDef e("probe");
  e.int_axis("n", "elements", 0, 100, 4);
  e.arrays([](const Args& a, Layout& l) { l.input("x", DType::f32, a.i64("n")).output("y", DType::f32, a.i64("n")); });
  e.generate([](const Args&, std::uint64_t, Arrays&) {});
  e.reference([](const Args&, const Arrays&, Reference&) {});
  e.check([](Compare&) {});
  e.variant("copy", "y = x").host([](Launch&) {});
  return e;
}

TEST(Sdk, ACompleteDefinitionIsAccepted) { EXPECT_NO_THROW(validate_definition(complete())); }

TEST(Sdk, AnIncompleteDefinitionNamesWhatIsMissing) {
  ExperimentDef e("probe");
  e.arrays([](const Args&, Layout&) {});
  try {
    validate_definition(e);
    FAIL() << "accepted a definition without generator, reference, check or variant";
  } catch (const std::logic_error& err) {
    EXPECT_EQ(std::string(err.what())
                  .rfind("LABRUN_EXPERIMENT(probe) declares no e.generate(...), e.reference(...), "
                         "e.check(...), e.variant(...)",
                         0),
              0u)
        << err.what();
  }
}

TEST(Sdk, ACheckOfAMissingOutputNamesTheOutputs) {
  const Point p{"probe", "copy", {{"n", std::int64_t{2}}}};
  float y[2] = {1, 2};
  Arrays in, out;
  out.put("y", View{y, 2, Elem::of(DType::f32)});
  Reference r;
  r.array("y", 2);
  Compare c(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  try {
    c.elementwise("z", [](std::int64_t, double) { return 1.0; });
    FAIL() << "compared an output that does not exist";
  } catch (const std::out_of_range& err) {
    EXPECT_EQ(std::string(err.what()),
              "check: no output array 'z' (outputs: y; declare it with l.output(...) in e.arrays)");
  }
  // And the comparison itself: y = {1, 2} against {0, 0} with bound 1 at scale 1 fails at element 1 only.
  const CheckResult& res = c.elementwise("y", [](std::int64_t, double) { return 1.0; });
  EXPECT_FALSE(res.passed);
  EXPECT_EQ(res.worst_index, 1);
  EXPECT_EQ(res.worst, 2.0);
  EXPECT_EQ(res.mismatches, 1);  // element 0 is at its bound (|1 - 0| / 1 = 1 <= scale 1)
  EXPECT_EQ(res.compared, 2);
}

// The re-check on fresh inputs compares a sample (case C21, docs/integrity.md): every s-th element, the first
// included, so a wrong element on the stride fails and one between the sampled ones is not looked at.
TEST(Sdk, ASampledElementwiseCheckComparesEveryStrideThElement) {
  const std::int64_t n = 100000, sample = 1000;  // stride 100
  std::vector<float> y(static_cast<std::size_t>(n));
  Reference r;
  std::vector<double>& want = r.array("y", n);
  for (std::int64_t i = 0; i < n; ++i)
    y[static_cast<std::size_t>(i)] = static_cast<float>(
        want[static_cast<std::size_t>(i)] = 0.5 * static_cast<double>(i % 977));
  y[50] = 1e6f;  // between samples 0 and 100
  const Point p{"probe", "copy", {{"n", n}}};
  Arrays in, out;
  out.put("y", View{y.data(), n, Elem::of(DType::f32)});
  auto tight = [](std::int64_t, double) { return 1e-3; };
  Compare sampled(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0, {}, {}, sample);
  EXPECT_TRUE(sampled.sampled());
  const CheckResult& pass = sampled.elementwise("y", tight);
  EXPECT_TRUE(pass.passed);
  EXPECT_EQ(pass.compared, sample);
  y[99900] = -1e6f;  // the last sampled element
  const CheckResult& fail = sampled.elementwise("y", tight);
  EXPECT_FALSE(fail.passed);
  EXPECT_EQ(fail.worst_index, 99900);
  EXPECT_EQ(fail.mismatches, 1);
  Compare full(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  EXPECT_FALSE(full.sampled());
  const CheckResult& all = full.elementwise("y", tight);
  EXPECT_EQ(all.compared, n);
  EXPECT_EQ(all.mismatches, 2);
}

// Compare::exact over a large array (split in parallel chunks): every mismatch counted, in any chunk, and the first
// one (the lowest index) reported with its values, the same on every machine.
TEST(Sdk, ExactCountsEveryMismatchAndReportsTheFirst) {
  const std::int64_t n = 1 << 20;
  std::vector<std::uint16_t> want(static_cast<std::size_t>(n)), got;
  for (std::int64_t i = 0; i < n; ++i)
    want[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(i * 2654435761u >> 16);
  got = want;
  const Point p{"probe", "copy", {{"n", n}}};
  Arrays in, out;
  in.put("x", View{want.data(), n, Elem::of(DType::bf16)});
  out.put("y", View{got.data(), n, Elem::of(DType::bf16)});
  const Reference r;
  Compare c(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  const CheckResult& same = c.exact("y", in["x"]);
  EXPECT_TRUE(same.passed);
  EXPECT_EQ(same.mismatches, 0);
  EXPECT_EQ(same.compared, n);
  for (const std::int64_t i : {n - 1, n / 2 + 3, std::int64_t{70001}, n / 2 + 4})
    got[static_cast<std::size_t>(i)] ^= 0x1;
  const CheckResult& off = c.exact("y", in["x"]);
  EXPECT_FALSE(off.passed);
  EXPECT_EQ(off.mismatches, 4);
  EXPECT_EQ(off.worst_index, 70001);
  EXPECT_TRUE(std::isinf(off.worst));
}

// Compare::elementwise_at: a reference smaller than the output, one value per chosen element (in the order given);
// the bound gets the position in the reference; every other element must still be finite (C07).
TEST(Sdk, ChosenElementsAreComparedAndEveryOtherMustBeFinite) {
  const Point p{"probe", "copy", {{"n", std::int64_t{6}}}};
  float y[6] = {10, 1, 20, 2, 30, 3};
  Arrays in, out;
  out.put("y", View{y, 6, Elem::of(DType::f32)});
  Reference r;
  std::vector<double>& ref = r.array("y", 3);  // elements 5, 1, 3 (any order): 3, 1, 2.5
  ref = {3, 1, 2.5};
  const std::vector<std::int64_t> at = {5, 1, 3};
  std::vector<std::int64_t> asked;
  Compare c(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  const CheckResult& ok = c.elementwise_at("y", at, [&](std::int64_t k, double) {
    asked.push_back(k);
    return k == 2 ? 1.0 : 0.5;  // element 3: |2 - 2.5| = 0.5 against 1
  });
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.compared, 3);  // elements 0, 2 and 4 (10, 20, 30) are not compared
  EXPECT_EQ(ok.worst_index, 3);
  EXPECT_EQ(ok.worst, 0.5);
  EXPECT_EQ(ok.worst_reference, 2.5);
  EXPECT_EQ(ok.worst_bound, 1.0);
  EXPECT_EQ(ok.not_finite, 0);
  EXPECT_NE(std::find(asked.begin(), asked.end(), 2), asked.end());
  // A compared element over its bound fails there, named by its index in the output.
  y[1] = 2;  // |2 - 1| / 0.5 = 2
  const CheckResult& off = c.elementwise_at("y", at, [](std::int64_t, double) { return 0.5; });
  EXPECT_FALSE(off.passed);
  EXPECT_EQ(off.worst_index, 1);
  EXPECT_EQ(off.worst, 2.0);
  EXPECT_EQ(off.mismatches, 1);
  y[1] = 1;
  // One non-finite element, at `index`: the check fails there, counted once as not finite and once as a mismatch.
  const auto expect_one_not_finite = [](const CheckResult& r, std::int64_t index) {
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.not_finite, 1);
    EXPECT_EQ(r.mismatches, 1);
    EXPECT_EQ(r.worst_index, index);
  };
  // NaN in an element the reference does not cover never passes (the poison of an element no thread wrote).
  y[4] = std::numeric_limits<float>::quiet_NaN();
  const CheckResult& nan = c.elementwise_at("y", at, [](std::int64_t, double) { return 1.0; });
  expect_one_not_finite(nan, 4);
  EXPECT_TRUE(std::isinf(nan.worst));
  EXPECT_TRUE(std::isnan(nan.worst_reference));
  // ... nor in a compared one (counted once).
  y[4] = 30;
  y[3] = std::numeric_limits<float>::infinity();
  const CheckResult& inf = c.elementwise_at("y", at, [](std::int64_t, double) { return 1.0; });
  expect_one_not_finite(inf, 3);
  EXPECT_EQ(inf.worst_reference, 2.5);
  y[3] = 2;
  // A reference that is not one value per index, or an index outside the output, is refused.
  EXPECT_THROW(c.elementwise_at("y", {5, 1}, [](std::int64_t, double) { return 1.0; }), std::invalid_argument);
  EXPECT_THROW(c.elementwise_at("y", {5, 1, 6}, [](std::int64_t, double) { return 1.0; }), std::invalid_argument);
  EXPECT_THROW(c.elementwise_at("z", at, [](std::int64_t, double) { return 1.0; }), std::out_of_range);
}

// A returned output (Role::returned): declared by the Layout, allocated by no one and left out of the working set;
// Compare::same_buffer passes only when the variant handed back the named input itself; a check with one is
// reported as not poisoned; a variant that hands back nothing fails with the output's name.
TEST(Sdk, AReturnedOutputIsTheVariantsBuffer) {
  Layout l;
  l.input("x", DType::f32, 4).returned("y", DType::f32, 4);
  EXPECT_EQ(l.bytes(Role::input), 16.0);
  EXPECT_EQ(l.bytes(Role::output), 0.0);
  ReturnedOutputs r(l);
  ASSERT_EQ(r.entries().size(), 1u);
  const std::optional<CheckOutcome> missing = r.missing();
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->passed());
  EXPECT_EQ(missing->error, "the variant handed back no 'y' (Launch::returns)");
  EXPECT_EQ(missing->poisoned, false);
  EXPECT_THROW(r.set("z", nullptr), std::out_of_range);
  float x[4] = {1, 2, 3, 4}, copy[4] = {1, 2, 3, 4};
  Arrays in;
  in.put("x", View{x, 4, Elem::of(DType::f32)});
  r.set("y", x);
  EXPECT_FALSE(r.missing().has_value());
  EXPECT_EQ(r.inputs_aliased(in).at("y"), "x");
  r.set("y", copy);
  EXPECT_EQ(r.inputs_aliased(in).at("y"), "");

  const Point p{"probe", "copy", {{"n", std::int64_t{4}}}};
  const Args args(p);
  const Reference ref;
  for (const bool same : {true, false}) {
    Arrays out;
    out.put("y", View{same ? x : copy, 4, Elem::of(DType::f32)});
    Compare c(args, [&]() -> const Arrays& { return in; }, out, ref, 1.0, {{"y", same ? "x" : ""}});
    EXPECT_TRUE(c.exact("y", in["x"]).passed) << "the same bits either way";
    const CheckResult& s = c.same_buffer("y", "x");
    EXPECT_EQ(s.kind, "same_buffer");
    EXPECT_EQ(s.passed, same);
    EXPECT_EQ(s.mismatches, same ? 0 : 4);
    ASSERT_EQ(s.notes.size(), 1u);
    EXPECT_EQ(s.notes[0].second, same ? 1.0 : 0.0);
    EXPECT_THROW(c.same_buffer("x", "x"), std::out_of_range) << "x is no returned output";
  }
  // Through the lab's comparison: not poisoned, and the failing same_buffer is the one reported.
  auto def = std::make_shared<ExperimentDef>(complete());
  def->check([](Compare& c) {
    c.exact("y", c.inputs()["x"]);
    c.same_buffer("y", "x");
  });
  const SdkExperiment exp(def);
  Arrays out;
  out.put("y", View{copy, 4, Elem::of(DType::f32)});
  const CheckOutcome failed = exp.compare(args, [&]() -> const Arrays& { return in; }, out, ref, 1.0, {{"y", ""}});
  EXPECT_FALSE(failed.passed());
  ASSERT_NE(failed.reported(), nullptr);
  EXPECT_EQ(failed.reported()->kind, "same_buffer");
  EXPECT_EQ(failed.poisoned, false);
  out.put("y", View{x, 4, Elem::of(DType::f32)});
  const CheckOutcome passed = exp.compare(args, [&]() -> const Arrays& { return in; }, out, ref, 1.0, {{"y", "x"}});
  EXPECT_TRUE(passed.passed());
  EXPECT_EQ(passed.poisoned, false);
  EXPECT_EQ(passed.comparisons.size(), 2u);
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// Layout::poison sets an output's poison byte (default 0xff) and HostArrays::poison writes each array's own;
// Layout::chunked marks an output; both refuse a name that is not an output.
TEST(Sdk, AnOutputDeclaresItsPoisonByteAndChunking) {
  Layout l;
  l.input("x", DType::f32, 3).add("y", Role::output, Elem::raw<std::int64_t>(), 3).output("z", DType::f32, 2);
  l.poison("y", 0x5a).chunked("y");
  EXPECT_EQ(l.entries()[1].poison, 0x5a);
  EXPECT_TRUE(l.entries()[1].chunked);
  EXPECT_EQ(l.entries()[2].poison, 0xff);
  EXPECT_FALSE(l.entries()[2].chunked);
  EXPECT_THROW(l.poison("x", 1), std::out_of_range);
  EXPECT_THROW(l.chunked("w"), std::out_of_range);
  HostArrays out(l, Role::output, true);
  out.poison();
  const auto* y = out.arrays()["y"].as<std::int64_t>();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y[i], 0x5a5a5a5a5a5a5a5aLL);
  const auto* z = out.arrays()["z"].as<std::uint32_t>();
  for (int i = 0; i < 2; ++i) EXPECT_EQ(z[i], 0xffffffffu);
}

// exact_chunks: the expectation is asked for consecutive chunks in order (at most kChunkBytes each), the output is
// read from host memory or through the reader, mismatches are counted over every chunk with the first one reported
// (a raw int64 as an integer); a chunked output (no data) refuses the other comparisons.
TEST(Sdk, ExactChunksComparesChunkByChunkInOrder) {
  const std::int64_t chunk = static_cast<std::int64_t>(Compare::kChunkBytes / 8), n = 2 * chunk + 5;
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = 3 * i;
  const Point p{"probe", "copy", {{"n", n}}};
  Arrays in, out;
  out.put("y", View{y.data(), n, Elem::raw<std::int64_t>()});
  Reference r;
  std::vector<std::pair<std::int64_t, std::int64_t>> asked;
  auto expect = [&](std::int64_t begin, std::int64_t count, void* e) {
    asked.emplace_back(begin, count);
    for (std::int64_t i = 0; i < count; ++i) static_cast<std::int64_t*>(e)[i] = 3 * (begin + i);
  };
  Compare c(
      Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  const CheckResult& ok = c.exact_chunks("y", expect);
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.kind, "exact");
  EXPECT_EQ(ok.compared, n);
  EXPECT_EQ(ok.mismatches, 0);
  EXPECT_EQ(asked, (std::vector<std::pair<std::int64_t, std::int64_t>>{{0, chunk}, {chunk, chunk}, {2 * chunk, 5}}));

  y[static_cast<std::size_t>(chunk + 7)] = -1;
  y[static_cast<std::size_t>(n - 1)] = 0x5a5a5a5a5a5a5a5aLL;
  asked.clear();
  int reads = 0;
  auto read = [&](const std::string& name, std::int64_t begin, std::int64_t count, void* host) {
    EXPECT_EQ(name, "y");
    ++reads;
    std::memcpy(host, y.data() + begin, static_cast<std::size_t>(count) * 8);
  };
  Arrays chunked;  // as the CUDA workload hands a chunked output: count and elem, no host copy
  chunked.put("y", View{nullptr, n, Elem::raw<std::int64_t>()});
  Compare d(
      Args(p), [&]() -> const Arrays& { return in; }, chunked, r, 1.0, {}, read);
  const CheckResult& bad = d.exact_chunks("y", expect);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(reads, 3);
  EXPECT_EQ(bad.mismatches, 2);
  EXPECT_EQ(bad.worst_index, chunk + 7);
  EXPECT_EQ(bad.worst_value, -1.0);
  EXPECT_EQ(bad.worst_reference, 3.0 * static_cast<double>(chunk + 7));
  EXPECT_THROW(d.exact("y", View{y.data(), n, Elem::raw<std::int64_t>()}), std::invalid_argument);

  // An empty output: nothing asked, passes.
  Arrays none;
  none.put("y", View{nullptr, 0, Elem::raw<std::int64_t>()});
  asked.clear();
  Compare e(
      Args(p), [&]() -> const Arrays& { return in; }, none, r, 1.0);
  EXPECT_TRUE(e.exact_chunks("y", expect).passed);
  EXPECT_TRUE(asked.empty());
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// What SdkExperiment::prefetch is tested with: x[i] = seed + i over n elements, a reference sum(x) * k (k a
// reference axis), counting the calls of each and noting the generator's thread; a seed of 99's set fails.
struct PrefetchProbe {
  std::atomic<int> sets{0}, references{0};
  std::thread::id generated_on;
  std::mutex m;
  std::shared_ptr<ExperimentDef> def() {
    auto e = std::make_shared<ExperimentDef>(complete());
    e->int_axis("k", "scale", 1, 10, 1);
    e->inputs_depend_on({"n"}).reference_depends_on({"k"});
    e->seed_text([](const Args&) { return std::string("probe"); });
    e->generate([this](const Args& a, std::uint64_t seed, Arrays& in) {
      ++sets;
      {
        std::lock_guard<std::mutex> lock(m);
        generated_on = std::this_thread::get_id();
      }
      if (seed == bad_seed) throw std::runtime_error("the generator refused this seed");
      float* x = in["x"].as<float>();
      for (std::int64_t i = 0; i < a.i64("n"); ++i)
        x[i] = static_cast<float>(seed % 1000 + static_cast<std::uint64_t>(i));
    });
    e->reference([this](const Args& a, const Arrays& in, Reference& r) {
      ++references;
      double s = 0;
      for (std::int64_t i = 0; i < in["x"].count; ++i) s += in["x"].as<const float>()[i];
      r.set("sum", s * static_cast<double>(a.i64("k")));
    });
    return e;
  }
  std::uint64_t bad_seed = 0;
};

// The re-check's second set made ahead on a thread of its own (SdkExperiment::prefetch, used by the CUDA workload
// while the GPU times): inputs() and reference() take what it made (one set, each reference axis value once though
// asked for three times) and give exactly what making them on demand gives; a prefetch of another input key is
// dropped when the key moves on; an error of the thread is thrown where the result is taken.
TEST(Sdk, APrefetchedSetAndReferenceAreTheOnesMadeOnDemand) {
  const Point k1{"probe", "copy", {{"n", std::int64_t{64}}, {"k", std::int64_t{1}}}};
  const Point k3{"probe", "copy", {{"n", std::int64_t{64}}, {"k", std::int64_t{3}}}};
  const std::uint64_t lab_seed = 7;
  PrefetchProbe ahead_probe, demand_probe;
  SdkExperiment ahead(ahead_probe.def()), demand(demand_probe.def());
  ahead.prefetch(Args(k1), lab_seed);
  ahead.prefetch(Args(k3), lab_seed);
  ahead.prefetch(Args(k1), lab_seed);
  const auto r1 = ahead.reference(Args(k1), lab_seed);
  const auto r3 = ahead.reference(Args(k3), lab_seed);
  EXPECT_NE(ahead_probe.generated_on, std::this_thread::get_id()) << "the set was made on the issuing thread";
  EXPECT_EQ(ahead_probe.sets.load(), 1);
  EXPECT_EQ(ahead_probe.references.load(), 2) << "k=1 asked twice is made once";
  EXPECT_EQ(r1->value("sum"), demand.reference(Args(k1), lab_seed)->value("sum"));
  EXPECT_EQ(r3->value("sum"), demand.reference(Args(k3), lab_seed)->value("sum"));
  EXPECT_EQ(r3->value("sum"), 3 * r1->value("sum"));
  const View& x = ahead.inputs(Args(k1), lab_seed)->arrays()["x"];
  const View& y = demand.inputs(Args(k1), lab_seed)->arrays()["x"];
  EXPECT_EQ(std::memcmp(x.data, y.data, x.bytes()), 0);
  EXPECT_EQ(ahead_probe.sets.load(), 1) << "the prefetched set is held: not made again";
  EXPECT_EQ(ahead.input_hashes(Args(k1), lab_seed), demand.input_hashes(Args(k1), lab_seed));

  // Another input key: the running prefetch is dropped, and the new key's reference is made on demand.
  const Point other{"probe", "copy", {{"n", std::int64_t{32}}, {"k", std::int64_t{1}}}};
  ahead.prefetch(Args(k1), lab_seed + 1);
  EXPECT_EQ(ahead.reference(Args(other), lab_seed)->value("sum"),
            demand.reference(Args(other), lab_seed)->value("sum"));

  // An error of the thread, where the result is taken.
  PrefetchProbe failing;
  SdkExperiment broken(failing.def());
  failing.bad_seed = broken.input_seed(Args(k1), lab_seed);
  broken.prefetch(Args(k1), lab_seed);
  try {
    broken.reference(Args(k1), lab_seed);
    FAIL() << "the prefetch's error was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the generator refused this seed");
  }
}

}  // namespace
}  // namespace labrun
