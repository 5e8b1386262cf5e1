// The integrity test aid's definition and host variants (integrity.hpp).
#include "integrity/integrity.hpp"

#include "affine.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>

using namespace labrun;
using labrun::integrity_aid::Fault;

namespace {

// y[i] = 2 x[i] + 1 for i in [0, end).
void compute(const float* x, float* y, std::int64_t end) {
  for (std::int64_t i = 0; i < end; ++i) y[i] = 2.0f * x[i] + 1.0f;
}

// The host variant with `fault` planted: a Setup, so faults that keep state keep it per point.
Setup host_variant(Fault fault) {
  return [fault](Launch& l) -> Step {
    const std::int64_t n = l.args().i64("n");
    float* cache = nullptr;
    if (fault == Fault::replays_cache || fault == Fault::setup_work || fault == Fault::allocated_guard)
      cache = static_cast<float*>(l.allocate(static_cast<std::size_t>(n) * sizeof(float)));
    if (fault == Fault::setup_work) compute(l.in("x").as<const float>(), cache, n);  // the inputs read in setup
    auto calls = std::make_shared<std::int64_t>(0);
    return [fault, n, cache, calls](Launch& l) {
      auto* x = static_cast<float*>(l.in("x").data);
      float* y = l.out("y").as<float>();
      const std::int64_t call = ++*calls;
      switch (fault) {
        case Fault::replays_cache:
          if (call == 1) compute(x, cache, n);
          std::memcpy(y, cache, static_cast<std::size_t>(n) * sizeof(float));
          return;
        case Fault::setup_work: std::memcpy(y, cache, static_cast<std::size_t>(n) * sizeof(float)); return;
        case Fault::tail_unwritten: compute(x, y, n - 1); return;
        default: compute(x, y, n);
      }
      if (fault == Fault::past_end) y[n] = 0.0f;
      if (fault == Fault::before_start) y[-1] = 0.0f;
      if (fault == Fault::scratch_guard) l.scratch("work").as<float>()[n] = 1.0f;
      if (fault == Fault::allocated_guard) cache[n] = 1.0f;
      if (fault == Fault::writes_input || (fault == Fault::writes_input_late && call >= integrity_aid::kLateCall))
        x[0] += 1.0f;
    };
  };
}

}  // namespace

LABRUN_EXPERIMENT(integrity) {
  e.describe("integrity test aid: y = 2x + 1 with planted faults (tests/aids/integrity)");
  aids::define_affine(e, true);
  for (const auto& row : integrity_aid::kVariants) e.variant(row.name, row.description).host(host_variant(row.fault));
}
