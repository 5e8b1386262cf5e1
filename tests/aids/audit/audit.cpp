// The audit test aid's definition (audit.hpp): the experiment as the integrity aid's, host side `correct` only.
#include "audit/audit.hpp"

#include "affine.hpp"

#include <labrun/experiment.hpp>

using namespace labrun;

LABRUN_EXPERIMENT(audit) {
  e.describe("audit test aid: y = 2x + 1 with CUDA calls around the work (tests/aids/audit)");
  aids::define_affine(e, false);
  for (const auto& row : audit_aid::kVariants) {
    VariantDef& v = e.variant(row.name, row.description);
    if (row.fault == audit_aid::Fault::none)
      v.host([](Launch& l) {
        const float* x = l.in("x").as<const float>();
        float* y = l.out("y").as<float>();
        for (std::int64_t i = 0; i < l.in("x").count; ++i) y[i] = 2.0f * x[i] + 1.0f;
      });
  }
}
