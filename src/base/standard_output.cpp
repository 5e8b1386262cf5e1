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

// The errno of the first write to standard output that failed, through std::cout (CheckedStdout), or 0.
int g_first_error = 0;

void note_error() {
  if (g_first_error == 0) g_first_error = errno;
}

/// std::cout's buffer once watch_standard_output() ran: the calls libstdc++'s own stdio buffer makes (fwrite, fputc,
/// fflush on stdout, so printf's text and std::cout's keep their order), each checked as it returns, so that the
/// reason of the first one that fails is kept. stdio keeps none: a long write that fails (diff --format json to a
/// full disk) leaves nothing for the last flush to fail on.
class CheckedStdout : public std::streambuf {
 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? traits_type::not_eof(c) : c;
    errno = 0;
    if (std::fputc(traits_type::to_char_type(c), stdout) != EOF) return c;
    note_error();
    return traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    errno = 0;
    const std::size_t done = std::fwrite(s, 1, static_cast<std::size_t>(n), stdout);
    if (done < static_cast<std::size_t>(n)) note_error();
    return static_cast<std::streamsize>(done);
  }
  int sync() override {
    errno = 0;
    if (std::fflush(stdout) == 0) return 0;
    note_error();
    return -1;
  }
};

// True when standard output is a pipe whose reading end is closed (`labrun history ... | head` after head left).
bool reader_gone() {
  struct pollfd p {};
  p.fd = STDOUT_FILENO;
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

// Ends the process as a write to a closed pipe ends GNU tools: by SIGPIPE, quietly (the shell sees 128 + 13). labrun
// ignores SIGPIPE while it runs (src/base/interrupt.hpp: a closed stderr must not kill a sweep), so it is restored
// here.
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

void watch_standard_output() {
  static CheckedStdout* const buffer = new CheckedStdout;  // never destroyed: std::cout is flushed at exit
  if (std::cout.rdbuf() != buffer) std::cout.rdbuf(buffer);
}

int close_standard_output(int rc) {
  // std::cout writes through stdio (its buffer is stdout's): what it holds is in stdout's buffer, flushed here with
  // the reason of a failure kept (errno is only the reason when the call failed: a successful first write sets
  // ENOTTY).
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
  if (g_first_error != 0) reason = g_first_error;  // the first failure's reason is the one that lost the output
  if (reason == 0 && close_reason != EBADF) reason = close_reason;
  // A printf that failed before the last flush left no reason behind (stdio keeps none): a reader that went away is
  // the one cause that can still be seen.
  if (reason == 0 && reader_gone()) reason = EPIPE;
  if (reason == EPIPE) die_of_sigpipe();
  std::cerr << "labrun: cannot write standard output: "
            << (reason != 0 ? std::strerror(reason) : "a write failed (a full disk, a closed pipe or descriptor?)")
            << "\n";
  return kExitOutput;
}

}  // namespace labrun
