// Tests of the experiment SDK's own rules (labrun/experiment.hpp, src/sdk.cpp) that no experiment exercises: an
// incomplete definition is refused at registration with what is missing, and a check of an output that does not
// exist names the outputs there are.
#include <gtest/gtest.h>

#include <string>

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
    EXPECT_EQ(std::string(err.what()).rfind("LABRUN_EXPERIMENT(probe) declares no e.generate(...), e.reference(...), "
                                            "e.check(...), e.variant(...)", 0), 0u) << err.what();
  }
}

TEST(Sdk, ACheckOfAMissingOutputNamesTheOutputs) {
  const Point p{"probe", "copy", {{"n", std::int64_t{2}}}};
  float y[2] = {1, 2};
  Arrays in, out;
  out.put("y", View{y, 2, Elem::of(DType::f32)});
  Reference r;
  r.array("y", 2);
  Compare c(Args(p), [&]() -> const Arrays& { return in; }, out, r, 1.0);
  try {
    c.elementwise("z", [](std::int64_t, double) { return 1.0; });
    FAIL() << "compared an output that does not exist";
  } catch (const std::out_of_range& err) {
    EXPECT_EQ(std::string(err.what()), "check: no output array 'z' (outputs: y; declare it with l.output(...) in e.arrays)");
  }
  // And the comparison itself: y = {1, 2} against {0, 0} with bound 1 at scale 1 fails at element 1 only.
  const CheckResult& res = c.elementwise("y", [](std::int64_t, double) { return 1.0; });
  EXPECT_FALSE(res.passed);
  EXPECT_EQ(res.worst_index, 1);
  EXPECT_EQ(res.worst, 2.0);
  EXPECT_EQ(res.mismatches, 1);  // element 0 is at its bound (|1 - 0| / 1 = 1 <= scale 1)
  EXPECT_EQ(res.compared, 2);
}

}  // namespace
}  // namespace labrun
