// Test helpers of the gelu experiment, shared by the host and GPU tests: host arrays, and the registered SDK
// experiment's generator, reference and check as the lab runs them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gelu/gelu.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "point_test.hpp"
#include "sdk_registry.hpp"
#include "test_util.hpp"

namespace labrun::test_gelu {

using gelu::Variant;

using test::kSeed;
inline constexpr double kU = 0x1.0p-24;  // f32 unit roundoff
inline constexpr double kUb = 0x1.0p-8;  // bf16 unit roundoff
inline const Variant kVariants[] = {Variant::unfused, Variant::fused, Variant::fused_vec};
inline const DType kDTypes[] = {DType::f32, DType::bf16};

inline std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("gelu"); }

inline const char* name(Variant v) {
  return v == Variant::unfused ? "unfused" : v == Variant::fused ? "fused" : "fused_vec";
}

inline Point point(const std::string& variant, std::int64_t n, const std::string& dtype,
                   const std::string& mode = "eager") {
  return test::hot_point("gelu", variant, {{"n", n}, {"dtype", dtype}}, mode);
}

/// A host array of n elements of `dtype` (one spare word so n = 0 has a valid pointer).
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t n = 0;
  std::vector<std::uint64_t> storage;
  View view() const { return View{const_cast<std::uint64_t*>(storage.data()), n, Elem::of(dtype)}; }
  double value(std::int64_t i) const { return view().value(i); }
  const void* data() const { return storage.data(); }
  std::size_t data_bytes() const { return static_cast<std::size_t>(n) * dtype_bytes(dtype); }
};
inline Inputs blank(std::int64_t n, DType dtype) {
  return Inputs{dtype, n, std::vector<std::uint64_t>((n * dtype_bytes(dtype) + 7) / 8 + 1, 0)};
}

/// Inputs holding exactly `values`, rounded to `dtype`.
inline Inputs inputs_of(const std::vector<float>& values, DType dtype) {
  Inputs in = blank(static_cast<std::int64_t>(values.size()), dtype);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) reinterpret_cast<float*>(in.storage.data())[i] = values[i];
    else reinterpret_cast<std::uint16_t*>(in.storage.data())[i] = float_to_bf16(values[i]);
  }
  return in;
}

/// The experiment's generator into a fresh array.
inline Inputs generate_inputs(std::int64_t n, DType dtype, std::uint64_t seed) {
  Inputs in = blank(n, dtype);
  gelu::generate(in.view(), seed);
  return in;
}

/// The experiment's reference (ExperimentDef::reference) of `in`.
inline std::vector<double> reference_of(const Inputs& in) {
  const Point p = point("fused", in.n, to_string(in.dtype));
  Arrays arrays;
  arrays.put("x", in.view());
  Reference r;
  sdk()->def().reference_fn()(Args(p), arrays, r);
  return r.array("y");
}

/// The experiment's check (ExperimentDef::check, through the lab's CheckOutcome) of output `out` of variant v.
inline CheckOutcome compare(Variant v, const Inputs& in, const std::vector<double>& ref, const void* out,
                            double scale) {
  const Point p = point(name(v), in.n, to_string(in.dtype));
  Arrays ins, outs;
  ins.put("x", in.view());
  outs.put("y", View{const_cast<void*>(out), in.n, Elem::of(in.dtype)});
  Reference r;
  r.array("y", in.n) = ref;
  return sdk()->compare(
      Args(p), [&]() -> const Arrays& { return ins; }, outs, r, scale);
}

/// The worst |y - ref| / bound of a check.
inline double ratio(const CheckOutcome& c) { return c.reported() ? c.reported()->worst : 0.0; }

/// One host iteration of `v`; the output as raw storage.
inline std::vector<std::uint64_t> run_host(Variant v, const Inputs& in) {
  Inputs y = blank(in.n, in.dtype), a = blank(in.n, in.dtype), b = blank(in.n, in.dtype);
  std::fill(y.storage.begin(), y.storage.end(), ~std::uint64_t{0});
  gelu::host_run(v, in.view(), y.view(), a.view(), b.view());
  return y.storage;
}

inline double out_value(const std::vector<std::uint64_t>& out, DType t, std::int64_t i) {
  if (t == DType::bf16) return bf16_to_float(reinterpret_cast<const std::uint16_t*>(out.data())[i]);
  return reinterpret_cast<const float*>(out.data())[i];
}

inline CheckOutcome check_host(Variant v, const Inputs& in, double scale = 1.0) {
  const auto ref = reference_of(in);
  const auto out = run_host(v, in);
  return compare(v, in, ref, out.data(), scale);
}

}  // namespace labrun::test_gelu
