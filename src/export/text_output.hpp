// The Output of a format that is one text: its hook writes what a function of the result returns. The diff and
// history formats that are text (src/diff/diff_{table,markdown}.cpp, src/history/history_{table,markdown}.cpp) are
// each this Output with their function.
#pragma once

#include <memory>
#include <string>

#include "output.hpp"

namespace labrun {

/// An Output whose diff hook writes text(result) to its stream, as it is. `text` must not be null; the hook throws
/// what `text` throws.
std::unique_ptr<Output> diff_text_output(std::string (*text)(const DiffResult&));

/// An Output whose history hook writes text(result) to its stream, as it is. `text` must not be null; the hook
/// throws what `text` throws.
std::unique_ptr<Output> history_text_output(std::string (*text)(const HistoryResult&));

}  // namespace labrun
