// sin_n and exp_n (include/labrun/vector_math.hpp): loops that GCC vectorizes into calls of glibc's libmvec
// (_ZGV*_sin, _ZGV*_exp), one clone per x86-64 vector width chosen at load time (target_clones). This file is
// compiled with -fopenmp-simd and -fno-math-errno (CMakeLists.txt) and labrun links libmvec where it found it
// (LABRUN_HAVE_MVEC); elsewhere the loops call the scalar functions.
#include <labrun/vector_math.hpp>

#include <cmath>

#if defined(LABRUN_HAVE_MVEC) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LABRUN_VECTOR_MATH 1
// libmvec provides vector variants of these (glibc's <bits/math-vector.h> declares them so only under -ffast-math,
// which labrun does not use: its references keep IEEE semantics).
#pragma omp declare simd notinbranch
extern "C" double sin(double) noexcept;
#pragma omp declare simd notinbranch
extern "C" double exp(double) noexcept;
#define LABRUN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LABRUN_VECTOR_MATH 0
#define LABRUN_CLONES
#endif

namespace labrun {

LABRUN_CLONES void sin_n(const double* x, double* y, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = ::sin(x[i]);
}

LABRUN_CLONES void exp_n(const double* x, double* y, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = ::exp(x[i]);
}

bool vector_math_vectorized() { return LABRUN_VECTOR_MATH != 0; }

}  // namespace labrun
