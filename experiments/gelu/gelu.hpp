// The gelu experiment: GELU with the tanh approximation, y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// elementwise over n elements, computed three ways: `unfused` (seven elementwise kernels as an eager framework
// runs the formula op by op, every intermediate a full tensor in the storage dtype), `fused` (one kernel,
// scalar loads and stores, f32 math in registers) and `fused_vec` (one kernel, 128-bit loads and stores).
// Shared by the host and CUDA implementations. Formulas: docs/experiments/gelu.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "dtype.hpp"
#include "point.hpp"

namespace labrun::gelu {

/// The cubic coefficient of the tanh approximation (Hendrycks & Gimpel, "Gaussian Error Linear Units", 2016).
inline constexpr double kAlpha = 0.044715;
/// √(2/π).
inline constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
/// The constants as every f32 kernel (GPU and host) uses them: each rounded to f32 once (relative error <= u_f32).
inline constexpr float kAlphaF = static_cast<float>(kAlpha);
inline constexpr float kSqrt2OverPiF = static_cast<float>(kSqrt2OverPi);
/// √(2/π)·0.044715 rounded to f32: the fused kernels evaluate z = x·(√(2/π) + √(2/π)·0.044715·x²).
inline constexpr float kAlphaSqrt2OverPiF = static_cast<float>(kAlpha * kSqrt2OverPi);

/// Kernels (and full-tensor round trips) of the unfused variant: pow3, scale, add, scale, tanh, add, multiply.
inline constexpr int kUnfusedKernels = 7;
/// Floating-point operations per element of the formula as written (x³ 2, ·0.044715 1, +x 1, ·√(2/π) 1,
/// tanh 1 (counted as one operation), +1 1, 0.5·x·(…) 2): what the unfused variant executes.
inline constexpr double kUnfusedFlopPerElement = 9;
/// Per element of the fused form x² (1), fma (2), x·p (1), tanh (1), 0.5·x (1), fma (2): x factored out of
/// the inner polynomial saves one multiply.
inline constexpr double kFusedFlopPerElement = 8;

enum class Variant { unfused, fused, fused_vec };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// A gelu point's axes, typed.
struct Params {
  Variant variant = Variant::fused_vec;
  std::int64_t n = 0;          ///< elements
  DType dtype = DType::f32;    ///< storage dtype of x, y and the unfused intermediates: f32 or bf16
  std::string mode = "eager";  ///< "eager" or "graph"
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value
/// (dtype other than f32 or bf16).
Params params_of(const Point& point);

/// Host copy of a point's input x: n elements in the storage dtype (bf16 as raw bits), 8-byte aligned.
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t n = 0;
  std::vector<std::uint64_t> storage;  ///< backing of data()
  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  std::size_t data_bytes() const { return static_cast<std::size_t>(n) * dtype_bytes(dtype); }
  /// Element i decoded exactly to double.
  double value(std::int64_t i) const;
};

/// Draws x from a counter-based generator (SplitMix64 of seed and index; Steele, Lea & Flood 2014): |x|
/// uniform in (0, 6] with a random sign, rounded to the dtype; never zero, reproducible for a seed and
/// identical on every thread count. @throws std::invalid_argument for n < 0 or a dtype other than f32/bf16.
Inputs generate(std::int64_t n, DType dtype, std::uint64_t seed);

/// GELU (tanh approximation) of x in double precision: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
double reference_value(double x);

/// The float64 reference of every element of `inputs` (n doubles), computed in parallel chunks.
std::vector<double> reference(const Inputs& inputs);

/// First-order bound on |y − ref| for one element (docs/experiments/gelu.md, "Tolerance"), from the exact x
/// and its reference ref = gelu(x):
///   bound = 2·( 0.5|x|·S·( √(2/π)·0.044715·|x|³·(e1 + e2) + |z|·(e3 + e4) ) + 0.5|x|·|t|·e5 + |ref|·(e6 + e7) )
/// with z = √(2/π)(x + 0.044715x³), t = tanh z, S = 1 − t², and e1..e7 the relative rounding errors the variant
/// commits at each step (roundings()). The factor 2 covers second-order terms. Cheap: t and S come from
/// 1 + t = 2·ref/x, no transcendental function. Units: those of x. Returns 0 for x = 0.
double bound(Variant variant, DType dtype, double x, double ref);

/// Relative rounding error (in units of 1, first order) the variant commits at each of the seven steps of the
/// formula, as used by bound(): e1 x³, e2 ·0.044715, e3 +x, e4 ·√(2/π), e5 tanh, e6 +1, e7 0.5·x·(…).
/// u_c = 2^-24 (f32 compute), s = u of the storage dtype when it is not f32 (bf16: 2^-8), else 0 (storing an
/// f32 result in f32 is exact). unfused: e1 = 2u_c + s (two multiplies), e2 = 2u_c + s (multiply and the f32
/// constant), e3 = u_c + s, e4 = 2u_c + s, e5 = 4u_c + s (tanhf within 2 ulp: CUDA Programming Guide, math
/// functions; glibc's tanhf likewise), e6 = u_c + s, e7 = u_c + s (0.5·x is exact). fused and fused_vec, which
/// evaluate z = x·fma(√(2/π)·0.044715, x², √(2/π)) and y = fma(h, t, h) with h = 0.5x: z within 4u_c of exact
/// (x², two constants, the fma, the product), put in e4 (e1 = e2 = e3 = 0); e5 = 4u_c; e6 = 0; e7 = u_c + s
/// (the final fma and the one store).
std::vector<double> roundings(Variant variant, DType dtype);

/// Compares a variant's output y (n elements of inputs.dtype at `output`) with the reference, element by element.
/// Check::value = abs_error = the worst ratio |y − ref| / bound over all elements (0 for n = 0), reference 0,
/// tolerance = `scale` (lab.tolerance_scale, default 1); passes iff the worst ratio <= scale and no element is
/// NaN or infinite (such an element has ratio +inf: case C07). detail: worst_index, its x, y, reference and
/// bound, max_abs_error, max_rel_error (relative to |ref|), mismatches (elements over the tolerance), nonfinite.
Check compare(Variant variant, const Inputs& inputs, const std::vector<double>& ref, const void* output, double scale);

/// Per-iteration cost model of a variant as its kernels issue the traffic (s = dtype bytes):
///   unfused: read 9·n·s, written 7·n·s, 7 launches, flop 9·n;
///   fused, fused_vec: read n·s, written n·s, 1 launch, flop 8·n;
///   compulsory 2·n·s (x read once, y written once); no host syncs. docs/experiments/gelu.md.
Cost cost(const Params& params);

/// Bytes of the buffers a point holds: x and y, plus the unfused variant's two scratch tensors.
double working_set_bytes(const Params& params);

/// Scratch tensors of the host unfused variant (two, as on the GPU), sized at first use.
struct HostScratch {
  std::vector<std::uint64_t> a, b;
};

/// One iteration of `variant` on the host into `output` (n elements of the storage dtype): unfused runs the seven
/// ops over whole arrays, each rounded to the storage dtype, in the order the GPU kernels run them; fused and
/// fused_vec compute each element in f32 registers as the fused kernels do (same expression, same fma) and
/// round once at the store. tanh is the C library's tanhf.
void host_run(Variant variant, const Inputs& inputs, void* output, HostScratch& scratch);

/// The f32 expression of the fused kernels for one element (host version; the device one is the same source
/// expression with fmaf and tanhf).
float fused_f32(float x);

/// Inputs and reference shared by the variants of consecutive points with the same (n, dtype, seed): the
/// sweep puts variants innermost (and interleaves modes), so each input set is generated once.
class InputCache {
 public:
  /// The inputs for `params` and lab `seed`; regenerated (the old set released first) when the key changes.
  std::shared_ptr<const Inputs> inputs(const Params& params, std::uint64_t seed);
  /// The float64 reference of the cached inputs, computed once per input set.
  std::shared_ptr<const std::vector<double>> reference_for(const Params& params, std::uint64_t seed);

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
  std::shared_ptr<const std::vector<double>> ref_;
};

/// The seed of a point's inputs: the lab seed mixed with the input-defining axes (n, dtype), not the variant.
std::uint64_t input_seed(const Params& params, std::uint64_t lab_seed);

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/gelu/cuda/gelu_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::gelu
