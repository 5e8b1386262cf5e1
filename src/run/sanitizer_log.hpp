// Reading compute-sanitizer's text report (its --log-file) into a point's findings, and naming the labrun array an
// address the tool reports falls in or next to. Host logic: tested from captured reports (tests/test_sanitize.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "point_record.hpp"

namespace labrun {

/// What one compute-sanitizer report (one process's --log-file) says.
struct SanitizerLog {
  std::vector<SanitizerFinding> findings;  ///< each error or warning block, in order (array not yet located)
  std::vector<std::optional<std::uint64_t>> addresses;  ///< findings[i]'s "Access to 0x..." (older: "Address 0x...")
  /// The error count of the tool's summary ("ERROR SUMMARY: 2 errors"; racecheck: the errors of "RACECHECK
  /// SUMMARY: 1 hazard displayed (1 error, 0 warnings)"); nullopt when the report has no summary (the process
  /// died before the tool could write one).
  std::optional<std::int64_t> errors;
};

/// Parses a compute-sanitizer report: lines that begin with its prefix "=========" (other lines, the program's own
/// output, are ignored). A block begins at an unindented line after the prefix (the headline, e.g. "Invalid
/// __global__ write of size 4 bytes", "Error: Race reported between Write access at k(float*)+0x90 in a.cu:12 ...",
/// "Program hit cudaErrorInvalidValue ...") and runs over the indented lines after it; the summary lines and the
/// banner are not blocks. The kernel is the name before "+0x" after "at " (the tool's demangled name); the host
/// backtrace is left out of the detail. Keeps at most kMaxSanitizerFindings blocks. Never throws.
SanitizerLog parse_sanitizer_log(const std::string& text);

/// Where `address` falls among `arrays` (addresses as hex text, as the record holds them): "y + 16 bytes" inside
/// an array, "y + 4108 bytes (past its end: y holds 4108 bytes)" after the nearest array's end, "y - 4 bytes
/// (before its start)" before the nearest array's start; nullopt when no array is within `reach_bytes` (default
/// 1 MiB) of it. An array whose address does not parse is passed over.
std::optional<std::string> locate_address(std::uint64_t address, const std::vector<SanitizerArray>& arrays,
                                          std::uint64_t reach_bytes = 1 << 20);

/// `report` completed from a parsed log: its errors and findings, each finding's array located among its arrays.
void add_sanitizer_log(SanitizerReport& report, const SanitizerLog& log);

/// The reason of a point the tool reported errors for: "compute-sanitizer memcheck: 1 error: Invalid __global__
/// write of size 4 bytes in past_end(float*, const float*, long) at y + 4108 bytes (past its end: y holds 4108
/// bytes)" (the first error finding named).
std::string sanitizer_failure_reason(const SanitizerReport& report);

}  // namespace labrun
