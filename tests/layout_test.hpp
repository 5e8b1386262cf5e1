// Test helpers of the layout experiment, shared by the host and GPU tests: host inputs, the experiment's generator,
// host variants, and the registered SDK experiment's reference and check as the lab runs them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "layout/layout.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "point_test.hpp"
#include "sdk_registry.hpp"
#include "test_util.hpp"

namespace labrun::test_layout {

using layout::Strided;
using layout::Variant;

using test::kSeed;
inline const Variant kVariants[] = {Variant::contiguous_noop, Variant::transpose_naive, Variant::transpose_tiled,
                                    Variant::broadcast_view, Variant::repeat_materialized};
inline const DType kDTypes[] = {DType::f32, DType::bf16};

inline std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("layout"); }

inline Point point(const std::string& variant, std::int64_t rows, std::int64_t cols, const std::string& dtype,
                   const std::string& mode = "eager") {
  return test::hot_point("layout", variant, {{"rows", rows}, {"cols", cols}, {"dtype", dtype}}, mode);
}

/// Host copy of a point's inputs: x (rows x cols, row-major) and bias (cols), in the storage dtype (bf16 as raw
/// bits), each with one spare word (a valid pointer for an empty shape).
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::uint64_t> x_storage, bias_storage;
  const void* x() const { return x_storage.data(); }
  const void* bias() const { return bias_storage.data(); }
  std::int64_t elements() const { return rows * cols; }
  std::size_t x_bytes() const { return static_cast<std::size_t>(elements()) * dtype_bytes(dtype); }
  std::size_t bias_bytes() const { return static_cast<std::size_t>(cols) * dtype_bytes(dtype); }
  View x_view() const { return View{const_cast<std::uint64_t*>(x_storage.data()), elements(), Elem::of(dtype)}; }
  View bias_view() const { return View{const_cast<std::uint64_t*>(bias_storage.data()), cols, Elem::of(dtype)}; }
  double x_value(std::int64_t i) const { return x_view().value(i); }
  double bias_value(std::int64_t j) const { return bias_view().value(j); }
};

inline Inputs blank(std::int64_t rows, std::int64_t cols, DType dtype) {
  Inputs in;
  in.dtype = dtype;
  in.rows = rows;
  in.cols = cols;
  in.x_storage.assign((static_cast<std::size_t>(rows * cols) * dtype_bytes(dtype) + 7) / 8 + 1, 0);
  in.bias_storage.assign((static_cast<std::size_t>(cols) * dtype_bytes(dtype) + 7) / 8 + 1, 0);
  return in;
}

/// The experiment's generator (layout::generate) into fresh host arrays.
inline Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed) {
  Inputs in = blank(rows, cols, dtype);
  layout::generate(in.x_view(), in.bias_view(), seed);
  return in;
}

/// Inputs holding exactly the given x (row-major) and bias values, rounded to `dtype`.
inline Inputs inputs_of(std::int64_t rows, std::int64_t cols, const std::vector<float>& x,
                        const std::vector<float>& bias, DType dtype) {
  Inputs in = blank(rows, cols, dtype);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (dtype == DType::f32) reinterpret_cast<float*>(in.x_storage.data())[i] = x[i];
    else reinterpret_cast<std::uint16_t*>(in.x_storage.data())[i] = float_to_bf16(x[i]);
  }
  for (std::size_t j = 0; j < bias.size(); ++j) {
    if (dtype == DType::f32) reinterpret_cast<float*>(in.bias_storage.data())[j] = bias[j];
    else reinterpret_cast<std::uint16_t*>(in.bias_storage.data())[j] = float_to_bf16(bias[j]);
  }
  return in;
}

/// One host iteration of `v`: the output y and the repeat's R (all-ones poison first, one spare word each) and the
/// returned view of the result.
struct HostRun {
  std::vector<std::uint64_t> out, repeated;
  Strided result;
};
inline HostRun run_host(Variant v, const Inputs& in) {
  HostRun r;
  r.out.assign((in.x_bytes() + 7) / 8 + 1, ~std::uint64_t{0});
  r.repeated.assign((in.x_bytes() + 7) / 8 + 1, ~std::uint64_t{0});
  r.result = layout::host_run(v, in.rows, in.cols, in.dtype, in.x(), in.bias(), r.out.data(), r.repeated.data());
  return r;
}

/// The experiment's check (ExperimentDef::check, through the lab's CheckOutcome) of variant v's output `out` (for
/// contiguous_noop the buffer it handed back, which is x's own when it is in.x(), as the lab finds it) and, for
/// repeat_materialized, its R `repeated`. @throws std::invalid_argument for repeat_materialized without R.
inline CheckOutcome compare(Variant v, const Inputs& in, const void* out, double scale,
                            const void* repeated = nullptr) {
  const Point p = point(layout::to_string(v), in.rows, in.cols, to_string(in.dtype));
  Arrays ins, outs;
  ins.put("x", in.x_view());
  ins.put("bias", in.bias_view());
  const Elem elem = Elem::of(in.dtype);
  outs.put("y", View{const_cast<void*>(out), in.elements(), elem});
  if (v == Variant::repeat_materialized) {
    if (!repeated) throw std::invalid_argument("layout test compare: repeat_materialized needs its R");
    outs.put("repeated", View{const_cast<void*>(repeated), in.elements(), elem});
  }
  Reference r;  // x + bias in double: read by the sums' check only (the copies compare with x's bits)
  if (layout::is_broadcast(v)) sdk()->def().reference_fn()(Args(p), ins, r);
  std::map<std::string, std::string> returned;
  if (v == Variant::contiguous_noop) returned["y"] = out == in.x() ? "x" : "";
  return sdk()->compare(
      Args(p), [&]() -> const Arrays& { return ins; }, outs, r, scale, returned);
}

/// The check of one host iteration of `v`.
inline CheckOutcome check_host(Variant v, const Inputs& in, double scale = 1.0) {
  const HostRun r = run_host(v, in);
  return compare(v, in, v == Variant::contiguous_noop ? r.result.data : r.out.data(), scale, r.repeated.data());
}

/// The comparison of kind `kind` in a check's record detail (the detail itself when it holds one comparison); null when
/// there is none.
inline Json comparison(const Json& detail, const std::string& kind) {
  if (detail.contains("checks")) {
    for (const auto& c : detail["checks"])
      if (c.value("kind", std::string()) == kind) return c;
    return Json();
  }
  return detail.value("kind", std::string()) == kind ? detail : Json();
}

/// Whether the check found the no-op's y to be x's own buffer (a same_buffer comparison that passed).
inline bool same_buffer(const Json& detail) {
  const Json c = comparison(detail, "same_buffer");
  return c.is_object() && c.contains("same_buffer") && real_from_json(c["same_buffer"]) == 1;
}

}  // namespace labrun::test_layout
