// The built-in experiments that declare themselves without the SDK (experiments.def), host side: one registry
// function, stored at static initialisation and run from main (register_linked_experiments).
#include "sdk_registry.hpp"

namespace labrun {

#define LABRUN_BUILTIN(name) \
  namespace name {           \
  void register_experiment(Registry& registry); \
  }
#include "experiments.def"
#undef LABRUN_BUILTIN

namespace {

void register_builtins(Registry& registry) {
#define LABRUN_BUILTIN(name) name::register_experiment(registry);
#include "experiments.def"
#undef LABRUN_BUILTIN
}

const detail::RegistryRegistrar kBuiltins("builtins", detail::RegistryRegistrar::Side::host, &register_builtins);

}  // namespace

}  // namespace labrun
