// Standard output's last write checked before labrun reports success (a result piped to a full disk or /dev/full
// is a failure, not exit 0 with the result lost).
#pragma once

namespace labrun {

/// Keeps the reason of the first write to standard output through std::cout that fails (std::cout then writes
/// through a buffer that checks each of its stdio calls as it returns; printf and std::cout keep their order), for
/// close_standard_output(). Idempotent; run_cli() calls it first.
void watch_standard_output();

/// Flushes std::cout and closes stdout, the way GNU coreutils' close_stdout does: when a write to standard output
/// failed at any time (the stream's error flag) or the final flush or close fails, prints "labrun: cannot write
/// standard output: REASON" on stderr (REASON: strerror of the first failed write through std::cout, else of the
/// failed flush or close, e.g. "No space left on device"; a generic text only when a printf failed before the last
/// flush, which had nothing left to write) and
/// returns kExitOutput (4); otherwise returns `rc` unchanged. A standard output that was already closed (EBADF)
/// with nothing written to it is not an error. A closed pipe (EPIPE, or a pipe whose reader is gone) is not
/// reported: the process dies of SIGPIPE, quietly, as GNU tools do (`labrun history ... | head`; the shell sees
/// 141). Call once, as main() returns.
int close_standard_output(int rc);

}  // namespace labrun
