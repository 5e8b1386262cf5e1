// The result files one command-line argument names: the one reading of "a file, a comma-separated list of files
// or a folder" that load_results and the commands (diff, history, merge, report) share.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace labrun {

/// The files `arg` names: a folder's *.jsonl files, sorted; otherwise the files of a comma-separated list, each
/// handed to `each_file` (when given) as soon as it is split off, before the rest of the list is read.
/// @throws ResultError naming `arg` for a folder that cannot be listed or holds no .jsonl file (saying so when it
///   holds .jsonl.gz files), or an empty name in the list.
std::vector<std::string> expand_result_path(const std::string& arg,
                                            const std::function<void(const std::string&)>& each_file = {});

}  // namespace labrun
