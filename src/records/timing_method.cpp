#include "timing_method.hpp"

#include "name_table.hpp"

namespace labrun {

namespace {

// The one place a timing method is spelled (`other` has no spelling of its own).
constexpr Named<TimingMethod> kTimingMethodNames[] = {
    {TimingMethod::host_steady_clock, "host_steady_clock"},
    {TimingMethod::host_clock_unsynchronized, "host_clock_unsynchronized"},
    {TimingMethod::cuda_events, "cuda_events+synchronized_wall"},
    {TimingMethod::cuda_events_blocked, "cuda_events_blocked+synchronized_wall"},
    {TimingMethod::nvbench_cold, "nvbench_cold"},
    {TimingMethod::nvbench_batch, "nvbench_batch"},
    {TimingMethod::gbench, "gbench"},
};

}  // namespace

const char* to_string(TimingMethod method) {
  return method == TimingMethod::other ? "" : name_in(kTimingMethodNames, method);
}

std::optional<TimingMethod> parse_timing_method(std::string_view name) { return parse_in(kTimingMethodNames, name); }

}  // namespace labrun
