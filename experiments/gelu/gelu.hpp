// The gelu experiment: GELU with the tanh approximation, y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// elementwise over n elements, computed three ways: `unfused` (seven elementwise kernels as an eager framework
// runs the formula op by op, every intermediate a full tensor in the storage dtype), `fused` (one kernel,
// scalar loads and stores, f32 math in registers) and `fused_vec` (one kernel, 128-bit loads and stores).
// The numerics shared by the host variants, the CUDA kernels (this header compiles under nvcc's C++17) and the
// tests. Formulas: docs/experiments/gelu.md.
#pragma once

#include <cstdint>
#include <vector>

#include <labrun/experiment.hpp>

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

/// Draws x (n elements of `x.elem`, f32 or bf16) from a counter-based generator (SplitMix64 of seed and index;
/// Steele, Lea & Flood 2014): |x| uniform in (0, 6] with a random sign, rounded to the dtype; never zero,
/// reproducible for a seed and identical on every thread count.
void generate(const View& x, std::uint64_t seed);

/// GELU (tanh approximation) of x in double precision: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
double reference_value(double x);

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

/// First-order bound on |y − ref| for one element (docs/experiments/gelu.md, "Tolerance"), from the exact x
/// and its reference ref = gelu(x), with e = roundings():
///   bound = 2·( 0.5|x|·S·( √(2/π)·0.044715·|x|³·(e1 + e2) + |z|·(e3 + e4) ) + 0.5|x|·|t|·e5 + |ref|·(e6 + e7) )
/// with z = √(2/π)(x + 0.044715x³), t = tanh z, S = 1 − t². The factor 2 covers second-order terms. Cheap: t
/// and S come from 1 + t = 2·ref/x, no transcendental function. Units: those of x. Returns 0 for x = 0.
double bound(const std::vector<double>& e, double x, double ref);

/// The f32 expression of the fused kernels for one element (host version; the device one is the same source
/// expression with fmaf and tanhf).
float fused_f32(float x);

/// One iteration of `variant` on the host from x into y (n elements of the storage dtype each): unfused runs the
/// seven ops over whole arrays through the scratch arrays a and b, each rounded to the storage dtype, in the order
/// the GPU kernels run them; fused and fused_vec compute each element in f32 as the fused kernels do (same
/// expression, same fma) and round once at the store. tanh is the C library's tanhf.
void host_run(Variant variant, const View& x, const View& y, const View& a, const View& b);

/// Per-iteration cost model of a variant as its kernels issue the traffic (s = dtype bytes):
///   unfused: read 9·n·s, written 7·n·s, 7 launches, flop 9·n; fused, fused_vec: read n·s, written n·s,
///   1 launch, flop 8·n; compulsory 2·n·s (x read once, y written once); no host syncs. docs/experiments/gelu.md.
Cost cost(Variant variant, DType dtype, std::int64_t n);

}  // namespace labrun::gelu
