#include "host_backend.hpp"

#include <chrono>
#include <fstream>
#include <string>

#include <labrun/status.hpp>

namespace labrun {

namespace {

class HostExecutor : public Executor {
 public:
  explicit HostExecutor(Workload& w) : w_(w) {}
  void iterate() override { w_.run(); }
  void wait() override {}
  Sample sample(std::int64_t batch) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < batch; ++i) w_.run();
    Sample s;
    s.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.iterations = batch;
    return s;
  }

 private:
  Workload& w_;
};

}  // namespace

Json HostBackend::environment() { return Json{{"kind", "host"}, {"name", "host CPU (one thread per variant run)"}}; }

Json HostBackend::calibrate() { return Json{{"backend", "host"}}; }

std::optional<std::string> HostBackend::mode_unsupported(const std::string& mode) const {
  if (mode == "eager") return std::nullopt;
  if (mode == "graph") return std::string("graph mode needs a CUDA device (host backend)");
  return "unknown mode '" + mode + "'";
}

std::unique_ptr<Executor> HostBackend::executor(Workload& workload, const ExecOptions& options) {
  // Settings the host cannot honour make the point not_supported rather than silently ignored.
  if (options.cold_l2)
    throw PointOutcome(Status::not_supported, "a cold L2 (flushed before every sample) needs a CUDA device");
  if (options.delay_s > 0) throw PointOutcome(Status::not_supported, "lab.delay_s (a spin kernel) needs a CUDA device");
  return std::make_unique<HostExecutor>(workload);
}

}  // namespace labrun

namespace labrun {

std::optional<double> HostBackend::free_memory_bytes() const {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace labrun
