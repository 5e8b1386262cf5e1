// SIGINT and SIGTERM as a request to stop, not an instant death: the sweep finishes or abandons the point in
// progress, keeps every finished line, stops its workers and says how to resume (docs/records.md "Resume").
#pragma once

#include <functional>
#include <stdexcept>

namespace labrun {

/// Installs handlers for SIGINT, SIGTERM and SIGHUP (a closed terminal) that only record the signal
/// (async-signal-safe), and ignores SIGPIPE (a closed pipe on stderr must not kill a sweep: writes then fail with
/// EPIPE instead; a closed standard output still ends the process by SIGPIPE, quietly, in close_standard_output()
/// as it exits, src/base/standard_output.hpp). Without
/// SA_RESTART, so a blocking poll() or waitpid() returns EINTR and the caller looks at interrupt_signal().
/// Idempotent.
void install_interrupt_handlers();

/// The first SIGINT, SIGTERM or SIGHUP received since install_interrupt_handlers(), or 0.
int interrupt_signal();

/// How many of them arrived (a second Ctrl-C asks to stop now, not after the point).
int interrupt_count();

/// Thrown by the sweep loop (between samples and between points) once interrupt_signal() is set: the point in
/// progress is abandoned, not written. `signal()` is the signal's number (the process exits 128 + it).
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal) : std::runtime_error("interrupted"), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Throws Interrupted if a signal arrived.
void throw_if_interrupted();

/// Runs a command that writes its output whole or not at all (merge, report, history) with the handlers installed:
/// an Interrupted thrown by `body` (its readers look between lines; it looks again before it commits) has already
/// removed the partial output on its way out; this says "labrun COMMAND: interrupted by SIGINT; nothing written"
/// on stderr and returns 128 + the signal (130, 143). Otherwise returns what `body` returns.
int run_interruptible(const char* command, const std::function<int()>& body);

}  // namespace labrun
