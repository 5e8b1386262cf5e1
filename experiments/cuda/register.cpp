// register_cuda_experiments: every experiment of experiments.def, CUDA side (linked into CUDA builds only).
#include "registry.hpp"

namespace labrun {

#define LABRUN_EXPERIMENT(name) \
  namespace name {              \
  void register_cuda(Registry& registry); \
  }
#include "experiments.def"
#undef LABRUN_EXPERIMENT

void register_cuda_experiments(Registry& registry) {
#define LABRUN_EXPERIMENT(name) name::register_cuda(registry);
#include "experiments.def"
#undef LABRUN_EXPERIMENT
}

}  // namespace labrun
