// labrun_testaid: the labrun command line with the test aids added (tests/aids/fault: variants that crash, hang
// or break the device on purpose). The CLI tests of fault isolation run it; labrun itself never has them.
#include "cli.hpp"
#include "standard_output.hpp"
#include "fault/fault.hpp"
#include <labrun/parallel.hpp>

#ifdef LABRUN_WITH_CUDA
#include "cuda_backend.hpp"
#endif

int main(int argc, char** argv) {
  (void)labrun::process_cpu_mask();
  labrun::DeviceHooks hooks;
#ifdef LABRUN_WITH_CUDA
  hooks.open_cuda = labrun::open_cuda_backend;
  hooks.device_count = labrun::cuda_device_count;
  hooks.register_cuda = [](labrun::Registry& r) { labrun::register_cuda_experiments(r); };
#endif
  hooks.register_extra = [](labrun::Registry& r) {
    labrun::fault::register_experiment(r);
#ifdef LABRUN_WITH_CUDA
    labrun::fault::register_cuda(r);
#endif
  };
  return labrun::close_standard_output(labrun::run_cli(argc, argv, hooks));
}
