#include "spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" char** environ;

namespace labrun {

int start_process(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program");
  std::vector<char*> c_argv;
  for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  const std::string program = options.program.empty() ? argv[0] : options.program;
  // The child's environment, made before fork (only async-signal-safe calls after it).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('=') + 1);
    bool overridden = false;
    for (const auto& o : options.env) overridden = overridden || o.rfind(key, 0) == 0;
    if (!overridden) env_strings.push_back(entry);
  }
  env_strings.insert(env_strings.end(), options.env.begin(), options.env.end());
  std::vector<char*> c_env;
  for (auto& e : env_strings) c_env.push_back(e.data());
  c_env.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(errno));
  if (pid == 0) {  // only async-signal-safe calls until exec
    if (options.parent_death_signal != 0 &&
        (prctl(PR_SET_PDEATHSIG, options.parent_death_signal) != 0 || getppid() != parent))
      _exit(127);
    if (options.keep_fd >= 0) {
      const int flags = fcntl(options.keep_fd, F_GETFD);
      if (flags < 0 || fcntl(options.keep_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) _exit(127);
    }
    // The parent's handlers do not survive exec, but an ignored SIGINT/SIGTERM would: restore the defaults.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (!options.output.empty()) {
      const int fd = open(options.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(127);
    }
    if (options.program.empty()) execvpe(program.c_str(), c_argv.data(), c_env.data());
    else execve(program.c_str(), c_argv.data(), c_env.data());
    _exit(127);
  }
  return pid;
}

std::optional<int> wait_process(int pid, bool block) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, block ? 0 : WNOHANG);
  if (r < 0) {
    if (errno == EINTR) return std::nullopt;
    throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (r == 0) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_process(const std::vector<std::string>& argv, const SpawnOptions& options) {
  const int pid = start_process(argv, options);
  while (true)
    if (const auto rc = wait_process(pid, true)) return *rc;
}

std::string find_script(const std::string& given, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!given.empty()) return fs::exists(given, ec) ? given : "";
  std::vector<fs::path> candidates = {fs::current_path(ec) / "scripts" / name};
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
      candidates.push_back(d / "scripts" / name);
    candidates.push_back(exe.parent_path().parent_path() / "share" / "labrun" / name);
  }
  for (const auto& p : candidates)
    if (fs::exists(p, ec)) return p.string();
  return "";
}

std::string python_with_matplotlib() {
  SpawnOptions quiet;
  quiet.output = "/dev/null";
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (run_process({candidate, "-c", "import matplotlib"}, quiet) == 0) return candidate;
  return "";
}

}  // namespace labrun
