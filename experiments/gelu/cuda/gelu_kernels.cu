// The gelu experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): every buffer is
// the SDK's (allocated before any capture, case C12); each op is marked for the kernel breakdown.
#include "gelu/cuda/gelu_kernels.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>
#include <labrun/kernels/occupancy.cuh>
#include <labrun/kernels/vec.cuh>

namespace labrun::gelu::kernels {

namespace {

using namespace ::labrun::kernels;  // Vec, Convert, block0_tail, resident_blocks_per_sm

// The constants, rounded to f32 once (as gelu.hpp's kAlphaF, kSqrt2OverPiF, kAlphaSqrt2OverPiF; static_cast of
// the same double literals, so host and device use the same bits).
constexpr float kAlphaF = static_cast<float>(0.044715);
constexpr float kSqrt2OverPiF = static_cast<float>(0.79788456080286535587989211986876);
constexpr float kAlphaSqrt2OverPiF = static_cast<float>(0.044715 * 0.79788456080286535587989211986876);

// The fused kernels' per-element expression (host twin: gelu::fused_f32): z = x·(√(2/π) + √(2/π)·0.044715·x²),
// y = h + h·tanh z with h = 0.5x. Explicit fmaf, so the compiler's contraction cannot change it.
__device__ __forceinline__ float gelu_f32(float x) {
  const float q = x * x;
  const float p = fmaf(kAlphaSqrt2OverPiF, q, kSqrt2OverPiF);
  const float z = x * p;
  const float t = tanhf(z);
  const float h = 0.5f * x;
  return fmaf(h, t, h);
}

// The per-element functors, on f32 values (b unused by one-input ops).
struct GeluOp {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return gelu_f32(a); }
};
template <Op O>
struct UnfusedOp;
template <>
struct UnfusedOp<Op::pow3> {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return a * a * a; }
};
template <>
struct UnfusedOp<Op::scale_alpha> {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return kAlphaF * a; }
};
template <>
struct UnfusedOp<Op::add> {
  static constexpr int kInputs = 2;
  __device__ float operator()(float a, float b) const { return a + b; }
};
template <>
struct UnfusedOp<Op::scale_sqrt2pi> {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return kSqrt2OverPiF * a; }
};
template <>
struct UnfusedOp<Op::tanh> {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return tanhf(a); }
};
template <>
struct UnfusedOp<Op::add_one> {
  static constexpr int kInputs = 1;
  __device__ float operator()(float a, float) const { return 1.0f + a; }
};
template <>
struct UnfusedOp<Op::mul_half> {
  static constexpr int kInputs = 2;
  __device__ float operator()(float a, float b) const { return (0.5f * a) * b; }
};

// out[i] = F(a[i], b[i]) over n elements with 16-byte loads and stores, one vector per thread over a full grid
// (vec_grid), as PyTorch's vectorised elementwise kernels launch; the last n mod W elements by block 0, scalar.
// A grid capped at the resident blocks with a grid-stride loop (four vectors in flight) measured 142 us against
// 128 us for this shape at n = 2^26 f32 on an H200, the copy's time (results/h200/gelu/torch/).
template <class S, class F>
__global__ void __launch_bounds__(kBlock)
    map_vec_kernel(const S* __restrict__ a, const S* __restrict__ b, S* __restrict__ out, std::int64_t n, F f) {
  using V = Vec<S>;
  constexpr int W = V::kWidth;
  constexpr bool kTwo = F::kInputs == 2;
  const std::int64_t vectors = n / W;
  const std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (v < vectors) {
    const uint4 ra = __ldg(reinterpret_cast<const uint4*>(a) + v);
    const uint4 rb = kTwo ? __ldg(reinterpret_cast<const uint4*>(b) + v) : ra;
    float fa[W], fb[W];
    V::unpack(ra, fa);
    if constexpr (kTwo) V::unpack(rb, fb);
#pragma unroll
    for (int j = 0; j < W; ++j) fa[j] = f(fa[j], kTwo ? fb[j] : 0.0f);
    reinterpret_cast<uint4*>(out)[v] = V::pack(fa);
  }
  block0_tail<W>(n, [&](std::int64_t i) {
    out[i] = Convert<S>::store(f(Convert<S>::load(a[i]), kTwo ? Convert<S>::load(b[i]) : 0.0f));
  });
}

// The scalar fused kernel: one element per thread per grid-stride step, one 4- or 2-byte load and store each.
template <class S>
__global__ void __launch_bounds__(kBlock)
    fused_scalar_kernel(const S* __restrict__ x, S* __restrict__ y, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride)
    y[i] = Convert<S>::store(gelu_f32(Convert<S>::load(x[i])));
}

int clamp_grid(std::int64_t work_items, int per_sm, int sm_count) {
  const std::int64_t wanted = (work_items + kBlock - 1) / kBlock;
  const std::int64_t cap = static_cast<std::int64_t>(per_sm) * std::max(sm_count, 1);
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

template <class S, class F>
void launch_map(const void* a, const void* b, void* out, std::int64_t n, cudaStream_t s) {
  const int grid = vec_grid(std::is_same_v<S, float> ? DType::f32 : DType::bf16, n);
  map_vec_kernel<S, F><<<grid, kBlock, 0, s>>>(static_cast<const S*>(a), static_cast<const S*>(b ? b : a),
                                               static_cast<S*>(out), n, F());
  LABRUN_CUDA_LAUNCHED();
}

template <class F>
void launch_map(DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t s) {
  switch (t) {
    case DType::f32: return launch_map<float, F>(a, b, out, n, s);
    case DType::bf16: return launch_map<__nv_bfloat16, F>(a, b, out, n, s);
    default: throw std::invalid_argument("gelu kernels: dtype must be f32 or bf16");
  }
}

}  // namespace

int op_inputs(Op op) { return op == Op::add || op == Op::mul_half ? 2 : 1; }

void unfused_op(Op op, DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t s) {
  switch (op) {
    case Op::pow3: return launch_map<UnfusedOp<Op::pow3>>(t, a, b, out, n, s);
    case Op::scale_alpha: return launch_map<UnfusedOp<Op::scale_alpha>>(t, a, b, out, n, s);
    case Op::add: return launch_map<UnfusedOp<Op::add>>(t, a, b, out, n, s);
    case Op::scale_sqrt2pi: return launch_map<UnfusedOp<Op::scale_sqrt2pi>>(t, a, b, out, n, s);
    case Op::tanh: return launch_map<UnfusedOp<Op::tanh>>(t, a, b, out, n, s);
    case Op::add_one: return launch_map<UnfusedOp<Op::add_one>>(t, a, b, out, n, s);
    case Op::mul_half: return launch_map<UnfusedOp<Op::mul_half>>(t, a, b, out, n, s);
  }
  throw std::invalid_argument("gelu kernels: unknown op");
}

void fused_vec(DType t, const void* x, void* y, std::int64_t n, cudaStream_t s) {
  launch_map<GeluOp>(t, x, nullptr, y, n, s);
}

void fused(DType t, const void* x, void* y, std::int64_t n, int sm, cudaStream_t s) {
  auto launch = [&](auto* typed) {
    using S = std::remove_pointer_t<decltype(typed)>;
    const int grid = clamp_grid(n, resident_blocks<&fused_scalar_kernel<S>, kBlock>(), sm);
    fused_scalar_kernel<S><<<grid, kBlock, 0, s>>>(static_cast<const S*>(x), static_cast<S*>(y), n);
    LABRUN_CUDA_LAUNCHED();
  };
  switch (t) {
    case DType::f32: return launch(static_cast<float*>(nullptr));
    case DType::bf16: return launch(static_cast<__nv_bfloat16*>(nullptr));
    default: throw std::invalid_argument("gelu kernels: dtype must be f32 or bf16");
  }
}

int vec_grid(DType t, std::int64_t n) { return labrun::cuda::grid_for(n / (t == DType::bf16 ? 8 : 4), kBlock); }

int scalar_grid(DType t, std::int64_t n, int sm) {
  if (t == DType::bf16) return clamp_grid(n, resident_blocks<&fused_scalar_kernel<__nv_bfloat16>, kBlock>(), sm);
  return clamp_grid(n, resident_blocks<&fused_scalar_kernel<float>, kBlock>(), sm);
}

namespace {

template <class S>
void prepare_typed() {
  (void)resident_blocks<&fused_scalar_kernel<S>, kBlock>();
}

}  // namespace

void prepare(DType t) {
  if (t == DType::bf16) prepare_typed<__nv_bfloat16>();
  else if (t == DType::f32) prepare_typed<float>();
  else throw std::invalid_argument("gelu kernels: dtype must be f32 or bf16");
}

}  // namespace labrun::gelu::kernels

namespace labrun::gelu {

// A variant's setup, returning its iteration: the seven ops (as an eager framework runs 0.5*x*(1 + tanh(sqrt(2/pi)*
// (x + 0.044715*x**3))), each a full read of its inputs and a full write of its output) or one fused kernel.
Step launcher(Launch& setup) {
  const std::string& variant = setup.args().variant();
  const View &x = setup.in("x"), &y = setup.out("y");
  const DType t = *x.elem.dtype;
  kernels::prepare(t);  // occupancy look-ups now, not inside a graph capture
  const std::int64_t n = x.count;
  const double ns = static_cast<double>(x.bytes());
  const void* xd = x.data;
  void* yd = y.data;
  // Everything an iteration needs is resolved here, so the timed iteration only launches.
  if (variant == "fused")
    return [=](Launch& l) {
      kernels::fused(t, xd, yd, n, l.sm_count(), l.stream());
      l.mark("gelu_scalar", 2 * ns);
    };
  if (variant == "fused_vec")
    return [=](Launch& l) {
      kernels::fused_vec(t, xd, yd, n, l.stream());
      l.mark("gelu_vec", 2 * ns);
    };
  using kernels::Op;
  void *a = setup.scratch("a").data, *b = setup.scratch("b").data;
  struct Step7 {
    Op op;
    const void *in1, *in2;
    void* out;
    const char* name;
  };
  const std::vector<Step7> ops = {
      {Op::pow3, xd, nullptr, a, "pow3"},     {Op::scale_alpha, a, nullptr, b, "scale_alpha"},
      {Op::add, xd, b, a, "add_x"},           {Op::scale_sqrt2pi, a, nullptr, b, "scale_sqrt2pi"},
      {Op::tanh, b, nullptr, a, "tanh"},      {Op::add_one, a, nullptr, b, "add_one"},
      {Op::mul_half, xd, b, yd, "mul_half_x"}};
  return [=](Launch& l) {
    for (const auto& o : ops) {
      kernels::unfused_op(o.op, t, o.in1, o.in2, o.out, n, l.stream());
      l.mark(o.name, (1 + kernels::op_inputs(o.op)) * ns);
    }
  };
}

LABRUN_CUDA_VARIANTS(gelu) { e.cuda("unfused", launcher).cuda("fused", launcher).cuda("fused_vec", launcher); }

}  // namespace labrun::gelu
