// Vectorized double-precision sin and exp over arrays, for host-side references: a reference computed twice per
// point (the correctness iteration's set and the re-check's fresh set, docs/integrity.md) is host time every sweep
// pays, and a scalar std::sin or std::exp per element is most of it where an experiment applies one per element.
#pragma once

#include <cstdint>

namespace labrun {

/// y[i] = sin(x[i]) for 0 <= i < n (double, radians). Computed with glibc's vector math library (libmvec: the
/// AVX-512, AVX2 or SSE variant the CPU supports, chosen at run time) where labrun was built with it, else with
/// std::sin. Accuracy: within 4 ulp (glibc manual, "Known Maximum Errors in Math Functions", libmvec), against
/// std::sin's 1 ulp; results may differ from std::sin's in the last bits, and between CPUs. `x` and `y` may be the
/// same array (in place); otherwise they must not overlap. n <= 0 does nothing. Never throws.
void sin_n(const double* x, double* y, std::int64_t n);

/// y[i] = exp(x[i]) for 0 <= i < n (double), as sin_n (libmvec within 4 ulp, else std::exp; in place allowed).
void exp_n(const double* x, double* y, std::int64_t n);

/// Whether sin_n and exp_n use glibc's libmvec in this build (false: the scalar std:: functions).
bool vector_math_vectorized();

}  // namespace labrun
