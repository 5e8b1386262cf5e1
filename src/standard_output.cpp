#include "standard_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <stdio_ext.h>

#include "exit_codes.hpp"

namespace labrun {

int close_standard_output(int rc) {
  std::cout.flush();
  const bool stream_failed = std::cout.bad() || std::ferror(stdout) != 0;
  const bool pending = __fpending(stdout) > 0;  // bytes still to write: lost if the close fails
  errno = 0;
  const bool close_failed = std::fclose(stdout) != 0;
  const int reason = errno;
  // EBADF alone: standard output was closed by the caller (`labrun list >&-`) and nothing was lost.
  if (!stream_failed && (!close_failed || (reason == EBADF && !pending))) return rc;
  std::fprintf(stderr, "labrun: cannot write standard output: %s\n",
               reason != 0 && reason != EBADF ? std::strerror(reason) : "a write failed (a full disk, a closed pipe or descriptor?)");
  return kExitOutput;
}

}  // namespace labrun
