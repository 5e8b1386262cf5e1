#include "lab_axes.hpp"

namespace labrun {

std::vector<AxisDecl> lab_axes() {
  return {
      {kModeAxis,
       AxisKind::Word,
       "eager launches, or one CUDA graph replayed per iteration (lab axis)",
       {},
       {},
       {"eager", "graph"},
       std::string("eager")},
      {kL2Axis,
       AxisKind::Word,
       "hot: back to back; cold: L2 flushed before every sample (lab axis; default lab.l2)",
       {},
       {},
       {"hot", "cold"},
       std::string("hot")},
  };
}

bool is_lab_axis(const std::string& name) { return name == kModeAxis || name == kL2Axis; }

}  // namespace labrun
