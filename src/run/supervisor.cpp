#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "lab.hpp"
#include "log.hpp"
#include "output_file.hpp"
#include "phase.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "output.hpp"
#include "spawn.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// The grace a worker gets to abandon its point and exit after SIGTERM.
constexpr double kStopGrace_s = 10;

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  const char* text = strsignal(signal);
  return fmt::format("SIG{} ({})", abbrev ? abbrev : std::to_string(signal).c_str(), text ? text : "?");
}

// The pipe a worker reports its phases on: "ID PHASE\n" lines (PhaseListener).
struct StatusPipe {
  int read_fd = -1, write_fd = -1;
  std::string buffer;
  StatusPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    read_fd = fds[0];
    write_fd = fds[1];
    ::fcntl(read_fd, F_SETFL, O_NONBLOCK);
  }
  ~StatusPipe() {
    if (read_fd >= 0) ::close(read_fd);
    if (write_fd >= 0) ::close(write_fd);
  }
  void close_write() {
    if (write_fd >= 0) ::close(write_fd);
    write_fd = -1;
  }
};

// Where the worker is: the point and phase it last named, and since when that point's span runs.
struct WorkerPosition {
  std::string id;
  Phase phase = Phase::done;
  Clock::time_point span_start = Clock::now();
  bool in_point() const { return !id.empty() && phase != Phase::done; }
};

// Reads what the pipe holds (waiting up to `timeout_ms`) into `position`.
void drain(StatusPipe& pipe, WorkerPosition& position, int timeout_ms) {
  pollfd p{pipe.read_fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return;
  char chunk[4096];
  while (true) {
    const ssize_t n = ::read(pipe.read_fd, chunk, sizeof chunk);
    if (n <= 0) break;
    pipe.buffer.append(chunk, static_cast<std::size_t>(n));
  }
  std::size_t newline;
  while ((newline = pipe.buffer.find('\n')) != std::string::npos) {
    const std::string line = pipe.buffer.substr(0, newline);
    pipe.buffer.erase(0, newline + 1);
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::optional<Phase> phase = parse_phase(std::string_view(line).substr(space + 1));
    if (!phase) continue;
    position.id = line.substr(0, space);
    position.phase = *phase;
    // A point's span starts when it starts (environment) and when the one before it finished.
    if (position.phase == Phase::environment || position.phase == Phase::done) position.span_start = Clock::now();
  }
}

// Appends the supervisor's record of a point whose worker died (crashed) or hung (timeout) to the lane's file:
// the worker's replacement sibling when it died before its first point replaced the old file (then renamed
// over it, now that it holds a complete point), else the file itself.
void write_lost_point(const Lane& lane, int worker_pid, const WorkerPosition& at, Status status,
                      const std::string& reason) {
  std::string target = lane.file;
  const std::string sibling = replacement_path(lane.file, worker_pid);
  std::error_code ec;
  const bool pending = fs::exists(sibling, ec);
  if (pending) target = sibling;
  const LaneState state = read_lane(target);
  if (!state.has_header) throw std::runtime_error(target + " has no header to add the point to");
  const Point* point = nullptr;
  for (const auto& p : lane.points)
    if (p.id() == at.id) point = &p;
  if (!point) throw std::runtime_error("the worker named point " + at.id + ", which is not in the sweep");
  PointRecord rec = new_point_record(*point, state.backend);
  rec.status = status;
  rec.reason = reason;
  rec.failed_phase = to_string(at.phase);
  {
    JsonlWriter writer(target, JsonlWriter::Append{});
    JsonlSink(writer).point(0, rec);
  }
  if (pending && std::rename(sibling.c_str(), lane.file.c_str()) != 0)
    throw OutputError("cannot replace " + lane.file + " with " + sibling + ": " + std::strerror(errno));
}

}  // namespace

LaneState read_lane(const std::string& path) {
  LaneState s;
  std::error_code ec;
  if (!fs::exists(path, ec)) return s;
  s.exists = true;
  bool first = true;
  for (const Json& r : read_jsonl(path)) {
    if (!r.is_object()) continue;
    const std::string type = r.value("type", "");
    if (first) s.has_header = type == "header";
    first = false;
    if (type == "point" && r.contains("id") && r["id"].is_string()) {
      s.done.insert(r["id"].get<std::string>());
    } else if (type == "header" || type == "segment") {
      ++s.segments;
      if (const Json* b = json_find(r, {"environment", "backend"}); b && b->is_string())
        s.backend = b->get<std::string>();
    }
  }
  return s;
}

namespace {

// Whether every point of `lane` is in its file already (a resumed lane that was complete, or the last worker's
// point was the last one).
bool lane_complete(const Lane& lane) {
  const LaneState state = read_lane(lane.file);
  std::size_t missing = 0;
  for (const auto& p : lane.points) missing += !state.done.count(p.id());
  return missing == 0;
}

// Starts a worker of `lane` (`fresh`: it writes the header, else it continues the file) that reports its
// position on `pipe`; returns its pid.
int start_worker(const Lane& lane, bool fresh, StatusPipe& pipe) {
  std::vector<std::string> argv = lane.worker_argv(fresh);
  argv.insert(argv.end(), {"--status-fd", std::to_string(pipe.write_fd)});
  SpawnOptions options;
  options.program = "/proc/self/exe";
  options.parent_death_signal = SIGKILL;
  options.keep_fd = pipe.write_fd;
  options.env = lane.env;
  const int pid = start_process(argv, options);
  pipe.close_write();
  return pid;
}

// How a worker ended: its exit code, whether the supervisor killed it for lab.point_timeout_s, and the signal of
// an interrupt (0: none) that made the supervisor stop it.
struct WorkerExit {
  int code = 0;
  bool timed_out = false;
  int interrupt = 0;
};

// On an interrupt: asks worker `pid` to abandon its point and flush, then makes sure it is gone (after the
// grace, or at once on a second signal). Returns its exit code.
int stop_worker(const Lane& lane, int pid, StatusPipe& pipe, WorkerPosition& at) {
  ::kill(pid, SIGTERM);
  const auto t0 = Clock::now();
  bool told = false;
  std::optional<int> rc;
  while (!(rc = wait_process(pid, false))) {
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    if (waited > kStopGrace_s || interrupt_count() > 1) ::kill(pid, SIGKILL);
    if (waited > 1 && !told) {
      spdlog::warn("{}stopping: waiting up to {:.0f} s for the worker to leave its point (again to stop it now)",
                   lane.label, kStopGrace_s);
      told = true;
    }
    drain(pipe, at, 100);
  }
  return *rc;
}

// Follows worker `pid` until it exits, reading its position into `at`; stops it on an interrupt and kills it
// when its point runs past lab.point_timeout_s.
WorkerExit watch_worker(const Lane& lane, int pid, StatusPipe& pipe, WorkerPosition& at) {
  WorkerExit out;
  std::optional<int> rc;
  while (!rc) {
    drain(pipe, at, 200);
    rc = wait_process(pid, false);
    if (rc) break;
    if (const int signal = interrupt_signal()) {
      out.code = stop_worker(lane, pid, pipe, at);
      out.interrupt = signal;
      return out;
    }
    if (lane.point_timeout_s > 0 && at.in_point() &&
        std::chrono::duration<double>(Clock::now() - at.span_start).count() > lane.point_timeout_s) {
      ::kill(pid, SIGKILL);
      while (!(rc = wait_process(pid, true))) {
      }
      out.timed_out = true;
    }
  }
  drain(pipe, at, 0);  // the last words, written before it exited
  out.code = *rc;
  return out;
}

// What a worker's end means for its lane: the lane's end (done, interrupted, failed), or nothing when a fresh
// worker is to run the next point (after writing the lost point of a worker that timed out or crashed).
std::optional<LaneEnd> lane_end_after(const Lane& lane, int pid, const WorkerPosition& at, const WorkerExit& w,
                                      LaneEnd end) {
  const int code = w.code;
  if (w.interrupt) {
    end.kind = LaneEnd::Kind::interrupted;
    end.signal = w.interrupt;
    return end;
  }
  if (w.timed_out) {
    const std::string reason = fmt::format(
        "the point ran past lab.point_timeout_s = {} s (in phase {}); its "
        "worker was killed and a fresh one runs the next point",
        lane.point_timeout_s, to_string(at.phase));
    write_lost_point(lane, pid, at, Status::timeout, reason);
    spdlog::warn("{}point {} timed out in phase {}; starting a fresh worker", lane.label.c_str(), at.id.c_str(),
                 to_string(at.phase));
  } else if (code == kExitOk || code == kExitPointsFailed) {
    return end;
  } else if (code == kExitWorkerFault) {
    spdlog::warn("{}a device fault ended the worker; starting a fresh one (it calibrates again)", lane.label.c_str());
  } else if (code == 128 + SIGINT || code == 128 + SIGTERM) {
    // Stopped by someone else's signal: the run stops as if it were ours.
    end.kind = LaneEnd::Kind::interrupted;
    end.signal = code - 128;
    return end;
  } else if (code > 128) {
    if (!at.in_point()) {
      spdlog::warn("{}the worker died of {} before its first point (opening the device or calibrating); not restarted",
                   lane.label.c_str(), signal_name(code - 128).c_str());
      end.kind = LaneEnd::Kind::failed;
      end.exit_code = kExitInternal;
      return end;
    }
    const std::string reason = fmt::format("the worker died of {} in phase {}; a fresh worker runs the next point",
                                           signal_name(code - 128), to_string(at.phase));
    write_lost_point(lane, pid, at, Status::crashed, reason);
    spdlog::warn("{}point {} crashed its worker ({}, phase {}); starting a fresh worker", lane.label.c_str(),
                 at.id.c_str(), signal_name(code - 128).c_str(), to_string(at.phase));
  } else {
    end.kind = LaneEnd::Kind::failed;  // bad input, no device, unwritable output: a restart cannot help
    end.exit_code = code;
    return end;
  }
  return std::nullopt;
}

// supervise_lane() without the cleanup around it: a worker at a time until the lane is done, interrupted or
// failed, a fresh worker after one that timed out, crashed or faulted.
LaneEnd run_lane(const Lane& lane) {
  LaneEnd end;
  bool fresh = !lane.continue_existing;
  while (true) {
    if (!fresh && lane_complete(lane)) return end;
    StatusPipe pipe;
    const int pid = start_worker(lane, fresh, pipe);
    WorkerPosition at;
    const WorkerExit exit = watch_worker(lane, pid, pipe, at);
    if (std::optional<LaneEnd> done = lane_end_after(lane, pid, at, exit, end)) return *done;
    ++end.restarts;
    fresh = false;
  }
}

}  // namespace

LaneEnd supervise_lane(const Lane& lane) {
  remove_stale_siblings(lane.file, false);  // left by a worker of an earlier run that died (src/base/output_file.hpp)
  const LaneEnd end = run_lane(lane);
  // Every worker is reaped: the partial file one was writing when it died or was killed is of no use, nor is a
  // lane file that holds no record (a fresh run that could not write its header, e.g. on a full disk).
  remove_stale_siblings(lane.file, false);
  std::error_code ec;
  if (end.kind != LaneEnd::Kind::finished && holds_no_records(lane.file)) fs::remove(lane.file, ec);
  return end;
}

}  // namespace labrun
