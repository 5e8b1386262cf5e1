// The built-in experiments that declare themselves without the SDK (experiments.def), CUDA side: one registry
// function, stored at static initialisation and run from main (register_linked_cuda). CUDA builds only.
#include "sdk_registry.hpp"

namespace labrun {

#define LABRUN_BUILTIN(name) \
  namespace name {           \
  void register_cuda(Registry& registry); \
  }
#include "experiments.def"
#undef LABRUN_BUILTIN

namespace {

void register_builtins_cuda(Registry& registry) {
#define LABRUN_BUILTIN(name) name::register_cuda(registry);
#include "experiments.def"
#undef LABRUN_BUILTIN
}

const detail::RegistryRegistrar kBuiltinsCuda("builtins", detail::RegistryRegistrar::Side::cuda, &register_builtins_cuda);

}  // namespace

}  // namespace labrun
