// CUDA implementations of the masking experiment's variants (kernels in kernels/masking_kernels.cu).
#pragma once

namespace labrun {
class Registry;
}

namespace labrun::masking {

/// Adds the CUDA implementation of every masking variant to `registry` (the experiment must be registered).
void register_cuda(Registry& registry);

}  // namespace labrun::masking
