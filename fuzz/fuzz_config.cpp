// libFuzzer harness: config loading and sweep expansion, the path `labrun validate` and `labrun sweep` take
// with a config file's bytes (src/config/config.hpp, src/config/sweep.hpp).
//
// The bytes are the config text: check_config_text(), then parse_config() against the built-in experiments
// (register_builtin, as main() registers them on a host-only build), then expand() with the config's
// experiment, and the points' identities (key, id, label: what records and --only read). The exceptions these
// functions document are the expected answers to bad input and are caught: ConfigError (a config that cannot be
// used, or a sweep of more than kMaxPoints) and std::invalid_argument (expand's experiment mismatch). Anything
// else escaping (libFuzzer reports it as a deadly signal from std::terminate), a crash, a leak, undefined
// behaviour, a hang (-timeout) or memory beyond -rss_limit_mb is a finding. scripts/sanitize.sh runs it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "fuzz_registry.hpp"
#include "registry.hpp"
#include "sweep.hpp"

namespace {

const labrun::Registry& registry() { return labrun::fuzz::builtin_registry(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz.yaml";
  try {
    labrun::check_config_text(text, path);
  } catch (const labrun::ConfigError&) {
  }
  try {
    const labrun::SweepConfig config = labrun::parse_config(text, path, registry());
    const labrun::RegisteredExperiment* experiment = registry().find(config.experiment);
    if (experiment == nullptr) std::abort();  // parse_config accepted an experiment that is not registered
    const std::vector<labrun::Point> points = labrun::expand(config, *experiment);
    // The identities of a bounded number of points (every point's would make large sweeps slow to fuzz).
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < points.size() && i < 64; ++i)
      bytes += points[i].key().size() + points[i].id().size() + points[i].label().size();
    if (!points.empty() && bytes == 0) std::abort();
  } catch (const labrun::ConfigError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
