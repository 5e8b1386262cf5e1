// register_builtin: every experiment of experiments.def, host side.
#include "registry.hpp"

namespace labrun {

#define LABRUN_EXPERIMENT(name) \
  namespace name {              \
  void register_experiment(Registry& registry); \
  }
#include "experiments.def"
#undef LABRUN_EXPERIMENT

void register_builtin(Registry& registry) {
#define LABRUN_EXPERIMENT(name) name::register_experiment(registry);
#include "experiments.def"
#undef LABRUN_EXPERIMENT
}

}  // namespace labrun
