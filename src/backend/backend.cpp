#include "backend.hpp"

namespace labrun {

const char* to_string(BackendKind kind) { return kind == BackendKind::host ? "host" : "cuda"; }

}  // namespace labrun
