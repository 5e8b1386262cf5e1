// labrun's entry point: wires the device layer (when built with CUDA) into the host command line.
#include "cli.hpp"
#include "standard_output.hpp"
#include <labrun/parallel.hpp>

#ifdef LABRUN_WITH_CUDA
#include "cuda_backend.hpp"
#endif

// Defined by labrun_add_runner (cmake/labrunRunner.cmake) in a runner built without some of its CUDA sources: their
// names. A weak reference: absent (null) in every other runner.
extern "C" __attribute__((weak)) const char* const labrun_runner_left_out_cuda;

int main(int argc, char** argv) {
  (void)labrun::process_cpu_mask();  // before any thread is pinned
  labrun::DeviceHooks hooks;
#ifdef LABRUN_WITH_CUDA
  hooks.open_cuda = labrun::open_cuda_backend;
  hooks.device_count = labrun::cuda_device_count;
  hooks.register_cuda = labrun::register_cuda_experiments;
#endif
  if (&labrun_runner_left_out_cuda != nullptr && labrun_runner_left_out_cuda)
    hooks.left_out_cuda = labrun_runner_left_out_cuda;
  return labrun::close_standard_output(labrun::run_cli(argc, argv, hooks));
}
