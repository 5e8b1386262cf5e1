#include "cuda_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <tuple>

#include "calibration.cuh"
#include "cupti_trace.hpp"

namespace labrun {

namespace {
std::atomic<long long> g_held[3] = {0, 0, 0};
std::atomic<long long> g_peak_work{0};
}  // namespace

std::size_t DeviceMemory::held_bytes(MemoryRole role) {
  return static_cast<std::size_t>(g_held[static_cast<int>(role)].load());
}
std::size_t DeviceMemory::peak_work_bytes() { return static_cast<std::size_t>(g_peak_work.load()); }
void DeviceMemory::reset_peak() { g_peak_work.store(g_held[static_cast<int>(MemoryRole::work)].load()); }
void DeviceMemory::account(MemoryRole role, long long bytes) {
  const long long now = g_held[static_cast<int>(role)].fetch_add(bytes) + bytes;
  if (role != MemoryRole::work) return;
  long long peak = g_peak_work.load();
  while (now > peak && !g_peak_work.compare_exchange_weak(peak, now)) {
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, MemoryRole role) : DeviceBuffer(bytes, role, 0) {}
DeviceBuffer::DeviceBuffer(std::size_t bytes, MemoryRole role, std::size_t lab_bytes)
    : bytes_(bytes), role_(role), lab_bytes_(std::min(lab_bytes, bytes)) {
  if (bytes == 0) return;
  LABRUN_CUDA(cudaMalloc(&ptr_, bytes));
  DeviceMemory::account(role_, static_cast<long long>(bytes_ - lab_bytes_));
  DeviceMemory::account(MemoryRole::lab, static_cast<long long>(lab_bytes_));
}
void DeviceBuffer::release() noexcept {
  if (!ptr_) return;
  LABRUN_CUDA_NOTHROW(cudaFree(ptr_));
  DeviceMemory::account(role_, -static_cast<long long>(bytes_ - lab_bytes_));
  DeviceMemory::account(MemoryRole::lab, -static_cast<long long>(lab_bytes_));
  ptr_ = nullptr;
}
DeviceBuffer::~DeviceBuffer() { release(); }
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    role_ = o.role_;
    lab_bytes_ = std::exchange(o.lab_bytes_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) { LABRUN_CUDA(cudaMallocHost(&ptr_, bytes)); }
PinnedBuffer::~PinnedBuffer() { LABRUN_CUDA_NOTHROW(cudaFreeHost(ptr_)); }

void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  // The process's staging buffers and their events: kept for the process (the lab copies back at every point).
  struct Staging {
    PinnedBuffer buffer[2]{PinnedBuffer(kStagingChunkBytes), PinnedBuffer(kStagingChunkBytes)};
    cudaEvent_t copied[2]{};
    Staging() {
      for (auto& e : copied) LABRUN_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  };
  static Staging* staging = new Staging();  // never destroyed: the driver may be gone at exit
  auto* out = static_cast<unsigned char*>(host);
  const auto* in = static_cast<const unsigned char*>(device);
  const std::size_t chunks = (bytes + kStagingChunkBytes - 1) / kStagingChunkBytes;
  auto size_of = [&](std::size_t k) { return std::min(kStagingChunkBytes, bytes - k * kStagingChunkBytes); };
  for (std::size_t k = 0; k <= chunks; ++k) {
    if (k < chunks) {  // chunk k into buffer k % 2 (free: chunk k - 2 left it below)
      LABRUN_CUDA(cudaMemcpyAsync(staging->buffer[k % 2].as<void>(), in + k * kStagingChunkBytes, size_of(k),
                                  cudaMemcpyDeviceToHost, stream));
      LABRUN_CUDA(cudaEventRecord(staging->copied[k % 2], stream));
    }
    if (k > 0) {  // chunk k - 1 out of its buffer while chunk k copies
      const std::size_t j = k - 1;
      LABRUN_CUDA(cudaEventSynchronize(staging->copied[j % 2]));
      std::memcpy(out + j * kStagingChunkBytes, staging->buffer[j % 2].as<void>(), size_of(j));
    }
  }
}

StreamBlocker::StreamBlocker() {
  LABRUN_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host_), 2 * sizeof(int), cudaHostAllocMapped));
  LABRUN_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  host_[0] = 1;
  host_[1] = 0;
}
StreamBlocker::~StreamBlocker() { LABRUN_CUDA_NOTHROW(cudaFreeHost(host_)); }
void StreamBlocker::block(cudaStream_t stream, double timeout_s) {
  static_cast<volatile int*>(host_)[0] = 0;
  static_cast<volatile int*>(host_)[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  lab_kernels::block_stream(device_, device_ + 1, timeout_s, stream);
}
void StreamBlocker::unblock() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  static_cast<volatile int*>(host_)[0] = 1;
}
bool StreamBlocker::timed_out() const { return static_cast<volatile int*>(host_)[1] != 0; }

Stream::Stream() { LABRUN_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() { LABRUN_CUDA_NOTHROW(cudaStreamDestroy(s_)); }

Event::Event() { LABRUN_CUDA(cudaEventCreate(&e_)); }
Event::~Event() {
  if (e_) LABRUN_CUDA_NOTHROW(cudaEventDestroy(e_));
}
double Event::seconds_since(const Event& start) const {
  float ms = 0;
  LABRUN_CUDA(cudaEventElapsedTime(&ms, start.e_, e_));
  return static_cast<double>(ms) * 1e-3;
}

LaunchContext::LaunchContext(int device) : device_(device) {
  LABRUN_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
}

void LaunchContext::read_to_host(void* host_pinned, const void* device, std::size_t bytes) {
  const DeclaredCalls declared;  // the variant's declared host sync: no audit finding (cupti_trace.hpp)
  LABRUN_CUDA(cudaMemcpyAsync(host_pinned, device, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  ++host_syncs_;
  LABRUN_CUDA(cudaStreamSynchronize(stream_.get()));
}

void LaunchContext::begin_marks() {
  marking_ = true;
  events_.clear();
  names_.clear();
  events_.emplace_back();
  events_.back().record(stream_.get());
}

void LaunchContext::mark(const char* name, double bytes) {
  if (!marking_) return;
  events_.emplace_back();
  events_.back().record(stream_.get());
  names_.emplace_back(name, bytes);
}

std::vector<std::tuple<std::string, double, double>> LaunchContext::end_marks() {
  marking_ = false;
  std::vector<std::tuple<std::string, double, double>> out;
  if (events_.empty()) return out;
  events_.back().synchronize();
  for (std::size_t i = 0; i < names_.size(); ++i)
    out.emplace_back(names_[i].first, names_[i].second, events_[i + 1].seconds_since(events_[i]));
  return out;
}

}  // namespace labrun
