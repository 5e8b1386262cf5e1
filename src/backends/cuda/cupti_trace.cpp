// CallTracer (cupti_trace.hpp): CUPTI's callback API, loaded with dlopen. Only the types and callback ids come from
// the toolkit's headers (cupti_callbacks.h, cupti_runtime_cbid.h, cupti_driver_cbid.h and the generated parameter
// structs); nothing links libcupti.
#include "cupti_trace.hpp"

#include <cupti.h>  // types, callback ids and the parameter structs only: libcupti is dlopen()ed

#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "shared_library.hpp"

namespace labrun {

namespace {

using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using EnableDomainFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char**);
using UnsubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle);
using RegisterBuffersFn = CUptiResult (*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
using ActivityKindFn = CUptiResult (*)(CUpti_ActivityKind);
using FlushAllFn = CUptiResult (*)(uint32_t);
using NextRecordFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);

struct Cupti {
  void* lib = nullptr;
  SubscribeFn subscribe = nullptr;
  EnableDomainFn enable_domain = nullptr;
  ResultStringFn result_string = nullptr;
  UnsubscribeFn unsubscribe = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  // The activity API (GPU times of the iteration's work); all null where the library lacks any of them.
  RegisterBuffersFn register_buffers = nullptr;
  ActivityKindFn activity_enable = nullptr;
  ActivityKindFn activity_disable = nullptr;
  FlushAllFn flush_all = nullptr;
  NextRecordFn next_record = nullptr;
  bool buffers_registered = false;
};

Cupti& cupti() {
  static Cupti c;
  return c;
}

constexpr CUpti_ActivityKind kActivityKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};

// The activity records delivered since the last take (CUPTI may deliver a buffer on a thread of its own).
std::mutex activity_mutex;
std::vector<TraceActivity> delivered;

const char* copy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

constexpr std::size_t kActivityBufferBytes = 1 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Reads a delivered buffer. The record structs are the toolkit header's; a newer CUPTI appends fields to a record,
// never moves the ones read here.
void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<TraceActivity> got;
  CUpti_Activity* r = nullptr;
  while (buffer && cupti().next_record && cupti().next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
    TraceActivity a;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      a.kind = TraceActivity::Kind::kernel;
      a.name = k->name ? k->name : "";
      a.correlation = k->correlationId;
      a.start_ns = k->start;
      a.end_ns = k->end;
      a.grid[0] = k->gridX, a.grid[1] = k->gridY, a.grid[2] = k->gridZ;
      a.block[0] = k->blockX, a.block[1] = k->blockY, a.block[2] = k->blockZ;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      a.kind = TraceActivity::Kind::memcpy;
      a.name = copy_kind_name(m->copyKind);
      a.correlation = m->correlationId;
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.bytes = m->bytes;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      a.kind = TraceActivity::Kind::memset;
      a.correlation = m->correlationId;
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.bytes = m->bytes;
    } else {
      continue;
    }
    got.push_back(std::move(a));
  }
  std::free(buffer);
  std::lock_guard lock(activity_mutex);
  for (auto& a : got) delivered.push_back(std::move(a));
}

thread_local int declared_depth = 0;  // DeclaredCalls alive on this thread
// Per runtime call entered and not yet left on this thread: whether the audit read it (then the driver calls it makes
// are its own and not recorded again).
thread_local std::vector<bool> runtime_handled;

TraceStream as_stream(const void* s) { return static_cast<TraceStream>(reinterpret_cast<std::uintptr_t>(s)); }

// Whether the call is a per-thread-default-stream form (_ptsz, _ptds): stream 0 there is the per-thread default
// stream, not the legacy one.
thread_local bool per_thread_call = false;
TraceStream stream_of(const void* s) {
  const TraceStream v = as_stream(s);
  return per_thread_call && v == 0 ? kPerThreadStream : v;
}
std::uint64_t as_event(const void* e) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(e)); }

const char* copy_name(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToDevice: return "memcpy HtoD";
    case cudaMemcpyDeviceToHost: return "memcpy DtoH";
    case cudaMemcpyDeviceToDevice: return "memcpy DtoD";
    case cudaMemcpyHostToHost: return "memcpy HtoH";
    default: return "memcpy";
  }
}

// The records of one call: any call, a piece of work (named) and a host wait (of a scope).
TraceCall call(TraceCall::Kind kind, const char* api, TraceStream stream = kLegacyStream, std::uint64_t event = 0) {
  return TraceCall{.kind = kind, .api = api, .stream = stream, .event = event};
}
TraceCall work(const char* api, std::string name, TraceStream stream) {
  return TraceCall{.kind = TraceCall::Kind::work, .api = api, .name = std::move(name), .stream = stream};
}
TraceCall sync(const char* api, TraceCall::SyncScope scope, TraceStream stream = kLegacyStream,
               std::uint64_t event = 0) {
  return TraceCall{.kind = TraceCall::Kind::sync, .api = api, .stream = stream, .event = event, .scope = scope};
}

// A decoder reads one family of API calls: what the audit records of one call of its family, or nullopt for a call of
// another family.
using Decoded = std::optional<std::vector<TraceCall>>;
using Decoder = Decoded (*)(unsigned cbid, const CUpti_CallbackData* d);

// The host stub of a runtime launch whose callback carried no symbol name: named after the recording stops
// (cudaFuncGetName is a runtime call, not made from inside a callback).
thread_local const void* launched_func = nullptr;

// Runtime kernel and graph launches.
Decoded runtime_launch(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
      const auto* a = static_cast<const cudaLaunchKernel_v7000_params*>(p);
      launched_func = a->func;
      return std::vector{work(api, kernel_name(d->symbolName), stream_of(a->stream))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* a = static_cast<const cudaLaunchKernelExC_v11060_params*>(p);
      launched_func = a->func;
      return std::vector{work(api, kernel_name(d->symbolName), stream_of(a->config ? a->config->stream : nullptr))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
      return std::vector{
          work(api, "graph launch", stream_of(static_cast<const cudaGraphLaunch_v10000_params*>(p)->stream))};
    default: return std::nullopt;
  }
}

// Runtime copies and memsets.
Decoded runtime_copy(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
      const auto* a = static_cast<const cudaMemcpyAsync_v3020_params*>(p);
      return std::vector{work(api, copy_name(a->kind), stream_of(a->stream))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000:
      return std::vector{work(api, "memset", stream_of(static_cast<const cudaMemsetAsync_v3020_params*>(p)->stream))};
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000: {
      // On the legacy default stream; a copy that involves host memory returns when it is done (a host wait).
      const auto* a = static_cast<const cudaMemcpy_v3020_params*>(p);
      std::vector<TraceCall> v{work(api, copy_name(a->kind), stream_of(nullptr))};
      if (a->kind != cudaMemcpyDeviceToDevice) v.push_back(sync(api, TraceCall::SyncScope::copy));
      return v;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000: return std::vector{work(api, "memset", stream_of(nullptr))};
    default: return std::nullopt;
  }
}

// Runtime event records, stream waits and host synchronizations.
Decoded runtime_order(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  using K = TraceCall::Kind;
  using S = TraceCall::SyncScope;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000: {
      const auto* a = static_cast<const cudaEventRecord_v3020_params*>(p);
      return std::vector{call(K::event_record, api, stream_of(a->stream), as_event(a->event))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010: {
      const auto* a = static_cast<const cudaEventRecordWithFlags_v11010_params*>(p);
      return std::vector{call(K::event_record, api, stream_of(a->stream), as_event(a->event))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: {
      const auto* a = static_cast<const cudaStreamWaitEvent_v3020_params*>(p);
      return std::vector{call(K::stream_wait, api, stream_of(a->stream), as_event(a->event))};
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
      return std::vector{
          sync(api, S::stream, stream_of(static_cast<const cudaStreamSynchronize_v3020_params*>(p)->stream))};
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020: return std::vector{sync(api, S::device)};
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
      return std::vector{sync(api, S::event, kLegacyStream,
                              as_event(static_cast<const cudaEventSynchronize_v3020_params*>(p)->event))};
    default: return std::nullopt;
  }
}

// Runtime allocations and frees.
Decoded runtime_memory(unsigned cbid, const CUpti_CallbackData* d) {
  const char* api = d->functionName;
  using K = TraceCall::Kind;
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: return std::vector{call(K::alloc, api)};
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020: return std::vector{call(K::stream_alloc, api)};
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      // cudaFree(nullptr) frees nothing: libraries call it to create the context.
      if (!static_cast<const cudaFree_v3020_params*>(d->functionParams)->devPtr) return std::vector<TraceCall>{};
      return std::vector{call(K::free, api)};
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020: return std::vector{call(K::free, api)};
    default: return std::nullopt;
  }
}

// The calls of one API call that the audit reads, by the first of `families` that decodes it; nullopt for any other.
template <std::size_t N>
Decoded decode(const Decoder (&families)[N], unsigned cbid, const CUpti_CallbackData* d) {
  for (const Decoder family : families)
    if (Decoded got = family(cbid, d)) return got;
  return std::nullopt;
}

// The calls of one runtime API call that the audit reads; nullopt for any other.
Decoded runtime_call(unsigned cbid, const CUpti_CallbackData* d) {
  static constexpr Decoder kFamilies[] = {runtime_launch, runtime_copy, runtime_order, runtime_memory};
  return decode(kFamilies, cbid, d);
}

bool is_driver_launch(unsigned cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
}

// Driver kernel and graph launches.
Decoded driver_launch(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return std::vector{
          work(api, kernel_name(d->symbolName), stream_of(static_cast<const cuLaunchKernel_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* a = static_cast<const cuLaunchKernelEx_params*>(p);
      return std::vector{work(api, kernel_name(d->symbolName), stream_of(a->config ? a->config->hStream : nullptr))};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      return std::vector{work(api, "graph launch", stream_of(static_cast<const cuGraphLaunch_params*>(p)->hStream))};
    default: return std::nullopt;
  }
}

// Driver copies and memsets on a stream.
Decoded driver_async_copy(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz:
      return std::vector{
          work(api, "memcpy DtoH", stream_of(static_cast<const cuMemcpyDtoHAsync_v2_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz:
      return std::vector{
          work(api, "memcpy HtoD", stream_of(static_cast<const cuMemcpyHtoDAsync_v2_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz:
      return std::vector{
          work(api, "memcpy DtoD", stream_of(static_cast<const cuMemcpyDtoDAsync_v2_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz:
      return std::vector{work(api, "memcpy", stream_of(static_cast<const cuMemcpyAsync_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz:
      return std::vector{work(api, "memset", stream_of(static_cast<const cuMemsetD8Async_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz:
      return std::vector{work(api, "memset", stream_of(static_cast<const cuMemsetD32Async_params*>(p)->hStream))};
    default: return std::nullopt;
  }
}

// Driver copies and memsets on the legacy default stream; a copy that involves host memory is a host wait too.
Decoded driver_sync_copy(unsigned cbid, const CUpti_CallbackData* d) {
  const char* api = d->functionName;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds: return std::vector{work(api, "memcpy DtoD", kLegacyStream)};
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2: return std::vector{work(api, "memset", kLegacyStream)};
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds:
      return std::vector{work(api, "memcpy", kLegacyStream), sync(api, TraceCall::SyncScope::copy)};
    default: return std::nullopt;
  }
}

// Driver event records, stream waits and host synchronizations.
Decoded driver_order(unsigned cbid, const CUpti_CallbackData* d) {
  const void* p = d->functionParams;
  const char* api = d->functionName;
  using K = TraceCall::Kind;
  using S = TraceCall::SyncScope;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord:
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz: {
      const auto* a = static_cast<const cuEventRecord_params*>(p);
      return std::vector{call(K::event_record, api, stream_of(a->hStream), as_event(a->hEvent))};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags:
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz: {
      const auto* a = static_cast<const cuEventRecordWithFlags_params*>(p);
      return std::vector{call(K::event_record, api, stream_of(a->hStream), as_event(a->hEvent))};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz: {
      const auto* a = static_cast<const cuStreamWaitEvent_params*>(p);
      return std::vector{call(K::stream_wait, api, stream_of(a->hStream), as_event(a->hEvent))};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
      return std::vector{sync(api, S::stream, stream_of(static_cast<const cuStreamSynchronize_params*>(p)->hStream))};
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2: return std::vector{sync(api, S::device)};
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
      return std::vector{
          sync(api, S::event, kLegacyStream, as_event(static_cast<const cuEventSynchronize_params*>(p)->hEvent))};
    default: return std::nullopt;
  }
}

// Driver allocations and frees.
Decoded driver_memory(unsigned cbid, const CUpti_CallbackData* d) {
  const char* api = d->functionName;
  using K = TraceCall::Kind;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: return std::vector{call(K::alloc, api)};
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz: return std::vector{call(K::stream_alloc, api)};
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
      if (!static_cast<const cuMemFree_v2_params*>(d->functionParams)->dptr) return std::vector<TraceCall>{};
      return std::vector{call(K::free, api)};
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost: return std::vector{call(K::free, api)};
    default: return std::nullopt;
  }
}

// The calls of one driver API call made outside any runtime call (a library's, or the variant's own).
Decoded driver_call(unsigned cbid, const CUpti_CallbackData* d) {
  static constexpr Decoder kFamilies[] = {driver_launch, driver_async_copy, driver_sync_copy, driver_order,
                                          driver_memory};
  return decode(kFamilies, cbid, d);
}

void CUPTIAPI on_cupti_call(void* tracer, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  static_cast<CallTracer*>(tracer)->on_call(static_cast<int>(domain), cbid, data);
}

std::string result_text(CUptiResult r) {
  const char* s = nullptr;
  if (cupti().result_string && cupti().result_string(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

OpenedLibrary open_cupti() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("LABRUN_CUPTI"); env && *env) paths.emplace_back(env);
  else
    paths = {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13",
             "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  return open_first_library(paths);
}

}  // namespace

CallTracer& CallTracer::instance() {
  static CallTracer* t = new CallTracer();  // never destroyed: CUPTI may call back during exit
  return *t;
}

CallTracer::CallTracer() {
  Cupti& c = cupti();
  const OpenedLibrary opened = open_cupti();
  c.lib = opened.handle;
  if (!c.lib) {
    unavailable_ = "CUPTI could not be loaded (tried " + opened.tried + "; set LABRUN_CUPTI to its path)";
    return;
  }
  c.subscribe = symbol<SubscribeFn>(c.lib, "cuptiSubscribe");
  c.enable_domain = symbol<EnableDomainFn>(c.lib, "cuptiEnableDomain");
  c.result_string = symbol<ResultStringFn>(c.lib, "cuptiGetResultString");
  if (!c.subscribe || !c.enable_domain) {
    unavailable_ = "CUPTI was loaded but lacks cuptiSubscribe or cuptiEnableDomain";
    return;
  }
  c.register_buffers = symbol<RegisterBuffersFn>(c.lib, "cuptiActivityRegisterCallbacks");
  c.activity_enable = symbol<ActivityKindFn>(c.lib, "cuptiActivityEnable");
  c.activity_disable = symbol<ActivityKindFn>(c.lib, "cuptiActivityDisable");
  c.flush_all = symbol<FlushAllFn>(c.lib, "cuptiActivityFlushAll");
  c.next_record = symbol<NextRecordFn>(c.lib, "cuptiActivityGetNextRecord");
  c.unsubscribe = symbol<UnsubscribeFn>(c.lib, "cuptiUnsubscribe");
  if (!c.unsubscribe) unavailable_ = "CUPTI was loaded but lacks cuptiUnsubscribe";
  // Subscribed only while recording: a subscriber left in place put about 4 us on every eager iteration of a point
  // with a host wait and eight launches (an H100), its API calls passing through CUPTI.
  else if (subscribe()) c.unsubscribe(c.subscriber);
}

bool CallTracer::subscribe() {
  Cupti& c = cupti();
  if (const CUptiResult r = c.subscribe(&c.subscriber, on_cupti_call, this); r != CUPTI_SUCCESS) {
    unavailable_ = result_text(r) + (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                                         ? ": another tool (a profiler) holds CUPTI"
                                         : ": cuptiSubscribe failed");
    c.subscriber = nullptr;
    return false;
  }
  return true;
}

void CallTracer::start(bool activity) {
  if (unavailable_) return;
  calls_.clear();
  unnamed_.clear();
  runtime_handled.clear();
  owner_ = std::this_thread::get_id();
  Cupti& c = cupti();
  if (!subscribe()) return;
  for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
    if (const CUptiResult r = c.enable_domain(1, c.subscriber, domain); r != CUPTI_SUCCESS) {
      unavailable_ = result_text(r) + ": cuptiEnableDomain failed";
      for (auto d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
        (void)c.enable_domain(0, c.subscriber, d);
      (void)c.unsubscribe(c.subscriber);
      return;
    }
  activity_.clear();
  activity_on_ = activity && start_activity();
  recording_.store(true, std::memory_order_release);
}

bool CallTracer::start_activity() {
  Cupti& c = cupti();
  if (!c.register_buffers || !c.activity_enable || !c.activity_disable || !c.flush_all || !c.next_record) return false;
  if (!c.buffers_registered) {
    if (c.register_buffers(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return false;
    c.buffers_registered = true;
  }
  {
    std::lock_guard lock(activity_mutex);
    delivered.clear();
  }
  for (auto kind : kActivityKinds)
    if (c.activity_enable(kind) != CUPTI_SUCCESS) {  // a profiler may hold the activity API: no GPU times
      for (auto k : kActivityKinds) (void)c.activity_disable(k);
      return false;
    }
  return true;
}

void CallTracer::stop_activity() {
  if (!activity_on_) return;
  activity_on_ = false;
  Cupti& c = cupti();
  // The iteration's work done (a fault stays sticky for the lab to find), its records delivered, then no more
  // records: nothing is traced while a sample is timed.
  if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  (void)c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (auto kind : kActivityKinds) (void)c.activity_disable(kind);
  (void)c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(activity_mutex);
  activity_ = std::move(delivered);
  delivered.clear();
}

std::vector<TraceCall> CallTracer::stop() {
  if (!recording_.load()) return {};
  recording_.store(false, std::memory_order_release);
  Cupti& c = cupti();
  for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
    (void)c.enable_domain(0, c.subscriber, domain);
  (void)c.unsubscribe(c.subscriber);
  stop_activity();
  for (const auto& [index, func] : unnamed_) {
    if (!calls_[index].name.empty()) continue;  // named by the driver launch inside it
    const char* name = nullptr;
    if (cudaFuncGetName(&name, func) == cudaSuccess && name) calls_[index].name = kernel_name(name);
    else (void)cudaGetLastError();
  }
  unnamed_.clear();
  // Which streams are blocking (made without cudaStreamNonBlocking): the legacy default stream and they wait for
  // each other (audit.hpp). A stream destroyed since, or one the runtime cannot read, counts as non-blocking.
  for (TraceCall& call : calls_) {
    if (call.stream == kLegacyStream || call.stream == kLegacyStreamHandle || call.stream == kPerThreadStream) continue;
    unsigned flags = 0;
    if (cudaStreamGetFlags(reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(call.stream)), &flags) ==
        cudaSuccess)
      call.blocking = (flags & cudaStreamNonBlocking) == 0;
    else (void)cudaGetLastError();
  }
  return std::move(calls_);
}

void CallTracer::on_call(int domain, unsigned cbid, const void* data) {
  // Only the thread that started the recording: another thread's calls are not the iteration's.
  if (!recording_.load(std::memory_order_acquire) || std::this_thread::get_id() != owner_) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  const bool enter = d->callbackSite == CUPTI_API_ENTER;
  std::optional<std::vector<TraceCall>> got;
  launched_func = nullptr;
  per_thread_call = d->functionName && (std::strstr(d->functionName, "_ptsz") || std::strstr(d->functionName, "_ptds"));
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (!enter) {
      if (!runtime_handled.empty()) runtime_handled.pop_back();
      return;
    }
    // A runtime call the audit reads stands for the driver calls it makes; one it does not read (a 2D copy, a
    // cooperative launch) lets them through, so they are still seen.
    if (!runtime_handled.empty() && runtime_handled.back()) {
      runtime_handled.push_back(true);
      return;
    }
    got = runtime_call(cbid, d);
    runtime_handled.push_back(got.has_value());
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (enter && !runtime_handled.empty() && runtime_handled.back()) {
      // The driver launch inside a runtime launch names its kernel where the runtime's callback did not (its
      // symbolName is valid for driver launch callbacks).
      if (!calls_.empty() && calls_.back().kind == TraceCall::Kind::work && !calls_.back().driver_correlation)
        calls_.back().driver_correlation = d->correlationId;
      if (is_driver_launch(cbid) && !calls_.empty() && calls_.back().kind == TraceCall::Kind::work &&
          calls_.back().name.empty())
        calls_.back().name = kernel_name(d->symbolName);
      return;
    }
    if (!enter) return;
    got = driver_call(cbid, d);
  }
  if (!got) return;
  for (TraceCall& c : *got) {
    c.declared = declared_depth > 0;
    c.correlation = d->correlationId;
    if (c.kind == TraceCall::Kind::work && c.name.empty() && launched_func)
      unnamed_.emplace_back(calls_.size(), launched_func);
    calls_.push_back(std::move(c));
  }
}

DeclaredCalls::DeclaredCalls() { ++declared_depth; }
DeclaredCalls::~DeclaredCalls() { --declared_depth; }

}  // namespace labrun
