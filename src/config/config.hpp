// Sweep configuration: the YAML schema, strict loading and the error type that names file, line and key.
// Schema: docs/config.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <labrun/axis.hpp>
#include "lab_settings.hpp"

namespace labrun {

class Registry;

/// A place in a config file. `line` and `column` are 1-based; 0 means unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
};

/// A config that cannot be used. what() reads "FILE:LINE: key 'KEY': MESSAGE" so that editors can jump to it.
/// Thrown by load_config(); main() maps it to exit code kExitConfig.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(SourceLoc loc, std::string key, std::string message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string key_;
  std::string message_;
};

/// One axis as the config gives it: the expanded list of values, in the order written.
struct AxisSpec {
  std::string name;
  std::vector<AxisValue> values;
  SourceLoc loc;
};

/// One `exclude` rule: a point is dropped when, for every key of `match`, the point's value on that axis is
/// one of the listed values. Values are already converted to the axis' kind.
struct ExcludeRule {
  std::vector<std::pair<std::string, std::vector<AxisValue>>> match;
  SourceLoc loc;
};

/// A whole validated sweep config.
struct SweepConfig {
  std::string path;    ///< as given on the command line
  std::string text;    ///< full file text, kept in the record header
  std::string sha256;  ///< hex SHA-256 of `text`
  std::string experiment;
  std::string description;
  std::vector<AxisSpec> axes;         ///< in the order written; axes not written take their default
  std::vector<std::string> variants;  ///< validated names; empty means every registered variant
  std::vector<ExcludeRule> excludes;
  LabSettings lab;
  /// `lab.host` / `lab.cuda`: the lab settings on that backend, the base settings with that section's on top
  /// (e.g. `processes: 1` on the host, where pooling multiplies a slow CPU's time). The CLI picks one once it knows
  /// the backend; `lab` is the base.
  std::map<std::string, LabSettings> lab_by_backend;
  nlohmann::ordered_json hypothesis;  ///< kept verbatim (null if absent); evaluated by the interpretation
};

/// Reads and validates a sweep config against the experiments in `registry`.
/// Strict: duplicate keys (C01), integers written as `1e7` converted exactly and non-integers or out-of-range
/// values rejected (C02), unknown keys with the nearest valid name suggested, wrong types, out-of-range values
/// (C03). Nothing is run and no file is written by this function.
/// @throws ConfigError naming file:line, the key and what was expected.
SweepConfig load_config(const std::string& path, const Registry& registry);

/// Lab settings from the command line (`--lab KEY=VALUE`, repeatable) applied on top of a config's: each is
/// checked exactly as the same key under `lab:` would be (errors name the file "--lab" and the key `lab.KEY`);
/// a later assignment of a key wins. @throws ConfigError for a malformed assignment or a bad key or value.
LabSettings apply_lab_overrides(const LabSettings& lab, const std::vector<std::string>& assignments,
                                const Registry& registry);

/// The largest config labrun reads, in bytes (1 MiB; the shipped configs are under 4 KB). load_config reads at
/// most one byte more, so /dev/zero or a runaway file is refused without reading it all.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

/// Checks a config's raw text before YAML sees it (hostile inputs): at most kMaxConfigBytes, valid UTF-8 (a
/// Latin-1 or UTF-16 file is named as such), no control characters but tab, line feed and carriage return, and
/// flow collections ([ ] { }) nested at most 64 deep. @throws ConfigError naming the line and column.
void check_config_text(const std::string& text, const std::string& path);

/// The offset of the first byte of `text` that does not start a valid UTF-8 sequence (RFC 3629: no overlong
/// forms, surrogates or code points above U+10FFFF), or nullopt when all of it is UTF-8.
std::optional<std::size_t> first_invalid_utf8(const std::string& text);

/// Same as load_config() but from text in memory; `path` is used in messages only.
SweepConfig parse_config(const std::string& text, const std::string& path, const Registry& registry);

/// Parses a finite decimal number as written by people: an optional sign, digits with an optional fraction,
/// an optional exponent (`12`, `-0.5`, `.5`, `1e7`, `2.5E-3`). Hex, `inf`, `nan`, spaces and anything else
/// give nullopt (std::strtod would take `0x10` and `inf`).
std::optional<double> parse_decimal(const std::string& text);

/// Parses a decimal written as `123`, `-4`, `1e7`, `2.5e3`, `1.0E+02` into the exact integer it denotes.
/// @returns nullopt and sets `why` when the text is not a number, not an integer (`12.5`) or outside int64
/// (`1e20`). Exact: works on the digits, never through a double. Case C02.
std::optional<std::int64_t> parse_exact_integer(const std::string& text, std::string* why);

/// A bound of an axis as people write it: an integral bound without exponent ("1000000000000"), else as
/// to_string(AxisValue) writes it.
std::string bound_text(double bound);

/// `value` with the last-place noise of A + i*S removed (0.30000000000000004 -> 0.3), so labels read as written:
/// the double nearest its 15-significant-digit text.
double tidy(double value);

/// Edit distance used to suggest the nearest valid key (Levenshtein, unit costs).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate closest to `word`, if it is close enough to be a plausible typo (distance <= max(2, len/3)).
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace labrun
