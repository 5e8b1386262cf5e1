// The constants of host_read's step, shared by the host code and the kernels (no other includes, so nvcc compiles
// it without the host-side headers): x ← fma(kDecay, x, offset(j)), loss_j = Σ x.
#pragma once

#include <cstdint>

namespace labrun::host_read {

/// The update's decay factor a in x ← a·x + c_j (exact in f32).
inline constexpr float kDecay = 0.75f;
/// The step's offset c_j = 0.25 + 0.125·(j mod 8), exact in f32 and double.
constexpr float offset(std::int64_t j) { return 0.25f + 0.125f * static_cast<float>(j % 8); }

/// Most blocks a step's reduction uses: the device partial sums are a fixed buffer of this many floats.
inline constexpr int kMaxBlocks = 4096;

}  // namespace labrun::host_read
