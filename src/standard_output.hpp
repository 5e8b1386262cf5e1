// Standard output's last write checked before labrun reports success (a result piped to a full disk or /dev/full
// is a failure, not exit 0 with the result lost).
#pragma once

namespace labrun {

/// Flushes std::cout and closes stdout, the way GNU coreutils' close_stdout does: when a write to standard output
/// failed at any time (the stream's error flag) or the final flush fails, prints "labrun: cannot write standard
/// output: REASON" on stderr and returns kExitOutput (4); otherwise returns `rc` unchanged. A standard output that
/// was already closed (EBADF) with nothing written to it is not an error. Call once, as main() returns.
int close_standard_output(int rc);

}  // namespace labrun
