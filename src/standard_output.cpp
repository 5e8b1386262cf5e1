#include "standard_output.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <stdio_ext.h>

#include "exit_codes.hpp"

namespace labrun {

namespace {

// True when standard output is a pipe whose reading end is closed (`labrun history ... | head` after head left).
bool reader_gone() {
  struct pollfd p {};
  p.fd = STDOUT_FILENO;
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

// Ends the process as a write to a closed pipe ends GNU tools: by SIGPIPE, quietly (the shell sees 128 + 13). labrun
// ignores SIGPIPE while it runs (src/interrupt.hpp: a closed stderr must not kill a sweep), so it is restored here.
[[noreturn]] void die_of_sigpipe() {
  std::signal(SIGPIPE, SIG_DFL);
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigprocmask(SIG_UNBLOCK, &pipe_only, nullptr);
  std::raise(SIGPIPE);
  std::_Exit(128 + SIGPIPE);  // not reached
}

}  // namespace

int close_standard_output(int rc) {
  // std::cout writes through stdio (sync_with_stdio): what it holds is in stdout's buffer, flushed here with the
  // reason of a failure kept (errno is only the reason when the call failed: a successful first write sets ENOTTY).
  const bool failed_before = std::cout.bad() || std::ferror(stdout) != 0;
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  int reason = flush_failed ? errno : 0;
  const bool pending = __fpending(stdout) > 0;  // bytes still to write: lost if the close fails
  errno = 0;
  const bool close_failed = std::fclose(stdout) != 0;
  const int close_reason = close_failed ? errno : 0;
  // EBADF alone: standard output was closed by the caller (`labrun list >&-`) and nothing was lost.
  if (!failed_before && !flush_failed && (!close_failed || (close_reason == EBADF && !pending))) return rc;
  if (reason == 0 && close_reason != EBADF) reason = close_reason;
  // A write that failed before the last flush left no reason behind (stdio keeps none): a reader that went away is
  // the one cause that can still be seen.
  if (reason == 0 && reader_gone()) reason = EPIPE;
  if (reason == EPIPE) die_of_sigpipe();
  std::cerr << "labrun: cannot write standard output: "
            << (reason != 0 ? std::strerror(reason) : "a write failed (a full disk, a closed pipe or descriptor?)")
            << "\n";
  return kExitOutput;
}

}  // namespace labrun
