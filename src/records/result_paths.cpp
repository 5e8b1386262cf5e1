#include "result_paths.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "record.hpp"

namespace labrun {

std::vector<std::string> expand_result_path(const std::string& arg,
                                            const std::function<void(const std::string&)>& each_file) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;  // a symlink loop or a name too long is the reader's to report, not a throw here
  if (fs::is_directory(arg, ec)) {
    bool gzipped = false;
    for (const auto& e : fs::directory_iterator(arg, ec)) {
      if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
      gzipped = gzipped || e.path().string().ends_with(".jsonl.gz") || e.path().string().ends_with(".jsonl.xz");
    }
    if (ec) throw ResultError("cannot list folder " + arg + ": " + ec.message());
    if (out.empty())
      throw ResultError(
          "folder '" + arg + "' holds no .jsonl result file" +
          (gzipped ? " (its .jsonl.gz and .jsonl.xz files must be unpacked first: gunzip -k, xz -dk)" : ""));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = arg.find(',', start);
    out.push_back(arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty())
      throw ResultError("'" + arg + "': an empty file name in a comma-separated list of result files");
    if (each_file) each_file(out.back());
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace labrun
