// CudaBackend (cuda_backend.hpp): opening the device, its environment and state, memory marks, the sticky-error
// check, the kernel breakdown, and the executor a point asks for (cuda_executors.hpp). Its calibration is in
// cuda_calibrate.cpp, the timing of a sample in cuda_timing.cpp.
#include "cuda_backend.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "calibration.cuh"
#include "cuda_executors.hpp"
#include "cuda_timing.hpp"
#include "nvml.hpp"
#include <labrun/cudnn.hpp>
#include <labrun/parallel.hpp>
#include "stats.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace {

using cuda_timing::host_probe;
using cuda_timing::Timing;

std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += buf;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

/// The host-side test aid for docs/diff.md "Across hosts": with LABRUN_TESTAID_BLOCKING_SYNC=1 the context is
/// created with cudaDeviceScheduleBlockingSync, so every host wait (stream and event synchronization, a
/// device-to-host copy) sleeps until the GPU's interrupt instead of spinning: a slower host path, GPU untouched.
/// Throws std::invalid_argument for any other non-empty value.
bool blocking_sync_requested() {
  const char* v = std::getenv("LABRUN_TESTAID_BLOCKING_SYNC");
  if (v == nullptr || *v == '\0' || std::string(v) == "0") return false;
  if (std::string(v) == "1") return true;
  throw std::invalid_argument(std::string("LABRUN_TESTAID_BLOCKING_SYNC=") + v + ": takes 1 (blocking sync) or 0");
}

/// How the context's host thread waits for the GPU (cudaGetDeviceFlags' schedule bits): auto, spin, yield or
/// blocking (CUDA Runtime API, cudaSetDeviceFlags).
std::string sync_wait_text() {
  unsigned flags = 0;
  if (cudaGetDeviceFlags(&flags) != cudaSuccess) return "unknown";
  switch (flags & cudaDeviceScheduleMask) {
    case cudaDeviceScheduleSpin: return "spin";
    case cudaDeviceScheduleYield: return "yield";
    case cudaDeviceScheduleBlockingSync: return "blocking";
    default: return "auto";
  }
}

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : -1;
}

}  // namespace

CudaBackend::CudaBackend(int index) : index_(index), ctx_((LABRUN_CUDA(cudaSetDevice(index)), index)) {
  cudaDeviceProp p{};
  LABRUN_CUDA(cudaGetDeviceProperties(&p, index));
  l2_bytes_ = static_cast<std::size_t>(p.l2CacheSize);
  memory_bytes_ = static_cast<std::size_t>(p.totalGlobalMem);
  nvml_ = std::make_unique<Nvml>(uuid_text(p.uuid));
  pinned_cpu_ = pin_this_thread();
  LABRUN_CUDA(cudaMemset(probe_word_.get(), 0, probe_word_.bytes()));
  // cudaMemset runs on the legacy default stream, which labrun's non-blocking streams do not wait for: done now.
  LABRUN_CUDA(cudaDeviceSynchronize());
}

CudaBackend::~CudaBackend() = default;

Json CudaBackend::device_state() {
  Json s = nvml_->state();
  // The host sync round trip now (case C23's other face: a process left on the GPU made every round trip take
  // milliseconds); held to the run's calibration.sync by point_warnings.
  Timing probe;
  probe.probe_word = &probe_word_;
  probe.probe_host = &probe_host_;
  s["sync_round_trip_time_s"] = host_probe(ctx_, probe);
  return s;
}

void CudaBackend::range_push(const std::string& name) { nvtxRangePushA(name.c_str()); }

void CudaBackend::range_pop() { nvtxRangePop(); }

void CudaBackend::memory_mark() {
  DeviceMemory::reset_peak();
  mark_work_bytes_ = DeviceMemory::held_bytes(MemoryRole::work);
  const auto free = free_memory_bytes();
  mark_used_bytes_ = free ? static_cast<double>(memory_bytes_) - *free : std::nan("");
}

std::optional<PointMemory> CudaBackend::memory_since_mark() {
  const std::size_t peak = DeviceMemory::peak_work_bytes();
  PointMemory m;
  m.peak_work_bytes = peak > mark_work_bytes_ ? peak - mark_work_bytes_ : 0;
  m.input_bytes = DeviceMemory::held_bytes(MemoryRole::input);
  const auto free = free_memory_bytes();
  if (free && std::isfinite(mark_used_bytes_))
    m.device_used_delta_bytes = static_cast<double>(memory_bytes_) - *free - mark_used_bytes_;
  return m;
}

Json CudaBackend::environment() {
  cudaDeviceProp p{};
  LABRUN_CUDA(cudaGetDeviceProperties(&p, index_));
  int driver = 0, runtime = 0;
  LABRUN_CUDA(cudaDriverGetVersion(&driver));
  LABRUN_CUDA(cudaRuntimeGetVersion(&runtime));
  const int mem_khz = attribute(cudaDevAttrMemoryClockRate, index_);
  const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index_);
  Json e;
  e["kind"] = "cuda";
  e.emplace("index", index_);
  e["name"] = p.name;
  e["uuid"] = uuid_text(p.uuid);
  e["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  e["arch"] = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  e["sm_count"] = p.multiProcessorCount;
  e["l2_bytes"] = p.l2CacheSize;
  e["memory_bytes"] = static_cast<std::int64_t>(p.totalGlobalMem);
  e["ecc_enabled"] = attribute(cudaDevAttrEccEnabled, index_) == 1;
  e["sm_clock_max_hz"] = static_cast<double>(attribute(cudaDevAttrClockRate, index_)) * 1e3;
  e["memory_clock_max_hz"] = static_cast<double>(mem_khz) * 1e3;
  e["memory_bus_bits"] = bus_bits;
  // Double data rate: two transfers per memory clock (CUDA samples' bandwidth formula).
  e["theoretical_bandwidth_Bps"] = 2.0 * static_cast<double>(mem_khz) * 1e3 * bus_bits / 8.0;
  e["driver_version"] = nvml_->driver_version();
  e["driver_cuda_version"] = version_text(driver);
  e["nvml"] = nvml_->available() ? Json("available") : Json(nvml_->why_unavailable());
  e["state_at_start"] = nvml_->state();
  e["runtime_version"] = version_text(runtime);
  // The cuDNN library experiments load (labrun/cudnn.hpp): which file and version, or why none loads.
  e.emplace("cudnn", cudnn::available() ? Json{{"path", cudnn::library().path},
                                               {"version", cudnn::library().version},
                                               {"requested", cudnn::library().requested}}
                                        : Json{{"unavailable", cudnn::unavailable_reason()}});
  e["host_thread_cpu"] = pinned_cpu_;
  e["sync_wait"] = sync_wait_text();
  e["pci_bus_id"] = [&] {
    char bus[32] = {0};
    return cudaDeviceGetPCIBusId(bus, sizeof bus, index_) == cudaSuccess ? std::string(bus) : std::string("unknown");
  }();
  return e;
}

std::optional<std::string> CudaBackend::mode_unsupported(const std::string& mode) const {
  if (mode == "eager" || mode == "graph") return std::nullopt;
  return "unknown mode '" + mode + "'";
}

std::unique_ptr<Executor> CudaBackend::executor(Workload& workload, const ExecOptions& options) {
  Timing how;
  how.synchronized = options.synchronized;
  how.delay_s = options.delay_s;
  how.probe_word = &probe_word_;
  how.probe_host = &probe_host_;
  how.audit = options.audit;
  how.launches = options.launches;
  how.audited_elsewhere = options.audited_elsewhere;
  how.audited_where = options.audited_where;
  if (options.blocking) {
    how.blocker = &blocker_;
    how.queue_launches = &queue_launches_;
  }
  if (options.cold_l2) {
    if (!flush_.get()) {
      flush_ = DeviceBuffer((2 * l2_bytes_ + 15) / 16 * 16, MemoryRole::lab);
      flush_sink_ = DeviceBuffer(static_cast<std::size_t>(lab_kernels::read_stream_sink_words(ctx_.sm_count())) * 4,
                                 MemoryRole::lab);
      LABRUN_CUDA(cudaMemsetAsync(flush_.get(), 0x5a, flush_.bytes(), ctx_.stream()));  // written once, read per sample
    }
    how.flush = &flush_;
    how.flush_sink = &flush_sink_;
  }
  if (options.mode == "graph") return make_graph_executor(workload, ctx_, how);
  return make_eager_executor(workload, ctx_, how, workload.cost());
}

std::optional<double> CudaBackend::free_memory_bytes() const {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return static_cast<double>(free);
}

double CudaBackend::flush_bytes() const { return flush_.get() ? 0.0 : 2.0 * static_cast<double>(l2_bytes_); }

std::optional<std::string> CudaBackend::sticky_error() {
  (void)cudaGetLastError();
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return std::nullopt;
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::optional<std::vector<KernelTime>> CudaBackend::kernel_breakdown(Workload& workload) {
  constexpr int kReps = 5;
  std::vector<std::vector<std::tuple<std::string, double, double>>> runs;
  for (int r = 0; r < kReps; ++r) {
    ctx_.begin_marks();
    try {
      workload.run();
    } catch (...) {
      (void)ctx_.end_marks();  // never leave marking on for later points and their timed samples
      throw;
    }
    runs.push_back(ctx_.end_marks());
  }
  std::vector<KernelTime> out;
  if (runs.empty() || runs[0].empty()) return std::nullopt;
  for (std::size_t i = 0; i < runs[0].size(); ++i) {
    std::vector<double> t;
    for (const auto& run : runs)
      if (i < run.size()) t.push_back(std::get<2>(run[i]));
    const double med = summarize(t).median;
    const double bytes = std::get<1>(runs[0][i]);
    out.push_back(KernelTime{.op = std::get<0>(runs[0][i]),
                             .bytes = bytes,
                             .time_s = med,
                             .bandwidth_Bps = med > 0 ? bytes / med : std::numeric_limits<double>::quiet_NaN()});
  }
  return out;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> open_cuda_backend(int index, std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    // Without any NVIDIA driver the runtime also answers cudaErrorInsufficientDriver.
    if (e == cudaErrorInsufficientDriver) *why = "no usable NVIDIA driver (" + *why + ")";
    if (e == cudaErrorNoDevice) *why = "no CUDA device (" + *why + ")";
    return nullptr;
  }
  if (index >= count) {
    *why = "device " + std::to_string(index) + " requested, " + std::to_string(count) + " present";
    return nullptr;
  }
  try {
    LABRUN_CUDA(cudaSetDevice(index));
    if (blocking_sync_requested()) LABRUN_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    LABRUN_CUDA(cudaFree(nullptr));  // create the context now, so a broken device fails here
    return std::make_unique<CudaBackend>(index);
  } catch (const std::exception& ex) {
    *why = ex.what();
    return nullptr;
  }
}

LaunchContext& launch_context(Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (!cuda)
    throw PointOutcome(Status::not_supported, "a CUDA implementation needs the CUDA backend, not " + backend.name());
  return cuda->context();
}

}  // namespace labrun
