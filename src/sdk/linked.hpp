// The experiments linked into a runner: the definition functions LABRUN_EXPERIMENT and LABRUN_CUDA_VARIANTS
// (labrun/experiment.hpp) stored at static initialisation, which the lab runs from main
// (src/lab/sdk_registry.hpp's register_linked_experiments and register_linked_cuda).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <labrun/experiment.hpp>

namespace labrun {

/// The definition functions stored at static initialisation, in the order their registrars ran.
struct Registrations {
  std::vector<std::pair<std::string, void (*)(ExperimentDef&)>> experiments;  ///< LABRUN_EXPERIMENT, by name
  std::vector<std::pair<std::string, void (*)(CudaDef&)>> cuda;               ///< LABRUN_CUDA_VARIANTS, by name
};

/// The one list every Registrar appends to (constructed on first use, whatever the order of static initialisers).
Registrations& registrations();

}  // namespace labrun
