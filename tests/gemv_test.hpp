// Test helpers of the gemv experiment, shared by the host and GPU tests: host inputs, the experiment's generator,
// reference and host variants, and the registered SDK experiment's check as the lab runs it.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemv/gemv.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "point_test.hpp"
#include "sdk_registry.hpp"
#include "test_util.hpp"

namespace labrun::test_gemv {

using gemv::Variant;

using test::kSeed;
inline const Variant kVariants[] = {Variant::row_block_256, Variant::row_block_512, Variant::row_block_1024,
                                    Variant::warp_row, Variant::cublas};
inline const DType kDTypes[] = {DType::f16, DType::bf16};

inline std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("gemv"); }

inline Point point(const std::string& variant, std::int64_t m, std::int64_t n, const std::string& dtype,
                   const std::string& mode = "eager") {
  return test::hot_point("gemv", variant, {{"m", m}, {"n", n}, {"dtype", dtype}}, mode);
}

/// Host copy of a point's inputs: A (m × n, row-major) and x (n), raw 16-bit patterns of the storage dtype.
struct Inputs {
  DType dtype = DType::f16;
  std::int64_t m = 0, n = 0;
  std::vector<std::uint16_t> a;  ///< m·n elements, a[i·n + j] = A[i, j]
  std::vector<std::uint16_t> x;  ///< n elements
  std::size_t a_bytes() const { return a.size() * 2; }
  std::size_t x_bytes() const { return x.size() * 2; }
  /// Element decoded exactly to float (every f16 and bf16 value is an f32).
  float decode(std::uint16_t bits) const { return dtype == DType::bf16 ? bf16_to_float(bits) : half_to_float(bits); }
  View a_view() const { return View{const_cast<std::uint16_t*>(a.data()), m * n, Elem::of(dtype)}; }
  View x_view() const { return View{const_cast<std::uint16_t*>(x.data()), n, Elem::of(dtype)}; }
};

/// The experiment's generator (gemv::generate) into fresh host arrays. @throws std::invalid_argument as it does,
/// and for negative sizes.
inline Inputs generate(std::int64_t m, std::int64_t n, DType dtype, std::uint64_t seed) {
  if (m < 0 || n < 0) throw std::invalid_argument("gemv test: m and n must be >= 0");
  Inputs in;
  in.dtype = dtype;
  in.m = m;
  in.n = n;
  in.a.assign(static_cast<std::size_t>(m * n), 0);
  in.x.assign(static_cast<std::size_t>(n), 0);
  gemv::generate(in.a_view(), in.x_view(), seed);
  return in;
}

/// The float64 reference (gemv::reference): y and abs_sum, m values each.
struct Ref {
  std::vector<double> y, abs_sum;
};
inline Ref reference(const Inputs& in) {
  Reference r;
  gemv::reference(in.a_view(), in.x_view(), in.m, in.n, r);
  return Ref{r.array("y"), r.array("abs_sum")};
}

/// One host iteration of `v` into y (m values, NaN first, one spare).
inline std::vector<float> run_host(Variant v, const Inputs& in) {
  std::vector<float> y(static_cast<std::size_t>(in.m) + 1, std::numeric_limits<float>::quiet_NaN());
  gemv::host_run(v, in.m, in.n, in.dtype, in.a.data(), in.x.data(), y.data());
  return y;
}

/// The experiment's check (ExperimentDef::check, through the lab's CheckOutcome) of variant v's y (m f32 values) at
/// lab.tolerance_scale `scale`.
inline CheckOutcome compare(Variant v, const Inputs& in, const float* y, double scale = 1.0) {
  const Point p = point(gemv::to_string(v), in.m, in.n, to_string(in.dtype));
  Arrays ins, outs;
  ins.put("A", in.a_view());
  ins.put("x", in.x_view());
  outs.put("y", View{const_cast<float*>(y), in.m, Elem::of(DType::f32)});
  Reference r;
  sdk()->def().reference_fn()(Args(p), ins, r);
  return sdk()->compare(
      Args(p), [&]() -> const Arrays& { return ins; }, outs, r, scale);
}

inline CheckOutcome check_host(Variant v, const Inputs& in, double scale = 1.0) {
  const auto y = run_host(v, in);
  return compare(v, in, y.data(), scale);
}

/// The worst |y − ref| / bound of a check (+inf for NaN or inf).
inline double ratio(const CheckOutcome& c) { return c.reported() ? c.reported()->worst : 0.0; }

}  // namespace labrun::test_gemv
