// The lab axes: what every experiment shares, as nvbench's exec tags and cold/hot measurements are. The launch
// mode (eager launches or one CUDA graph replayed) and the L2 state (hot: back to back; cold: flushed before every
// sample) are axes of every experiment, appended by Registry::add, so their names and values are part of every
// point's key. A variant declares the modes it runs in (VariantDef::modes).
#pragma once

#include <string>
#include <vector>

#include <labrun/axis.hpp>

namespace labrun {

/// Axis name of the launch mode: "eager" or "graph".
inline constexpr const char* kModeAxis = "mode";
/// Axis name of the L2 state: "hot" or "cold"; its default is lab.l2.
inline constexpr const char* kL2Axis = "l2";

/// The lab axes' declarations, in the order they are appended to an experiment's axes.
std::vector<AxisDecl> lab_axes();

/// Whether `name` is a lab axis.
bool is_lab_axis(const std::string& name);

}  // namespace labrun
