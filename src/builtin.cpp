#include "masking.hpp"
#include "registry.hpp"

namespace labrun {

void register_builtin(Registry& registry) {
  masking::register_experiment(registry);  // experiments/masking.cpp
}

}  // namespace labrun
