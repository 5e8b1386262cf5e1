// The disposition of a point after its lab pass, and the exceptions a phase throws to set one. Adding a status is a
// line of the enum and a row of its name table (src/sdk/status.cpp: its spelling in records and whether it
// fails a sweep), and its line in docs/records.md's table of statuses.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace labrun {

/// Disposition of a point (after CUTLASS profiler's Disposition). Only `ok` carries a trusted timing.
enum class Status {
  ok,                   ///< correct, timed
  incorrect,            ///< the correctness check failed; not timed
  skipped,              ///< deliberately not run, with a reason (e.g. host backend size cap)
  not_supported,        ///< the variant or backend does not support this combination, with a reason
  capture_unsupported,  ///< graph mode: the launch sequence could not be captured (e.g. it synchronizes)
  error,                ///< an unexpected failure, with its message; the sweep goes on
  device_fault,         ///< a sticky CUDA error (illegal address, launch failure, trap) broke the device
                        ///< context; reason = the CUDA error's name and the phase; a fresh worker goes on
  crashed,              ///< the worker process died (a signal: abort, segfault) in this point; a fresh one goes on
  timeout,              ///< the point ran past lab.point_timeout_s; its worker was killed and replaced
  escaped,              ///< the audit saw work on a stream the lab's stream never waits for (case C16): the time
                        ///< would not measure it, so none is kept; reason names the kernel and both streams
  sanitized,            ///< a sanitizer sweep (--sanitize): setup and the correctness iteration ran under
                        ///< compute-sanitizer, which reported no error and the check passed; not timed
};

/// True for the statuses that make a sweep exit 1 (kExitPointsFailed): incorrect, error, device_fault, crashed,
/// timeout, escaped. Ok, skipped, not_supported and capture_unsupported do not.
bool is_failure(Status status);

/// Lower-case name used in records ("ok", "not_supported", ...).
const char* to_string(Status status);

/// The status spelled `name` in records (as to_string writes it), or nullopt for any other text.
std::optional<Status> parse_status(std::string_view name);

/// Every status's name in enum order, joined by ", " ("ok, incorrect, skipped, ..."), for messages.
std::string status_names();

/// Thrown by a phase to end a point's lab pass with a status other than ok/incorrect.
class PointOutcome : public std::runtime_error {
 public:
  PointOutcome(Status status, const std::string& reason) : std::runtime_error(reason), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

}  // namespace labrun
