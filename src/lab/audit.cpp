// The audit's decisions over one iteration's API calls (audit.hpp).
#include "audit.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace labrun {

namespace {

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The legacy default stream has two handles (0 and cudaStreamLegacy): one stream.
TraceStream canonical(TraceStream s) { return s == kLegacyStreamHandle ? kLegacyStream : s; }

// What one stream (or event) is known to follow: per stream, the count of that stream's work items covered.
using Covered = std::map<TraceStream, std::uint64_t>;

void merge_into(Covered& into, const Covered& from) {
  for (const auto& [s, n] : from) into[s] = std::max(into[s], n);
}

std::string work_words(const TraceCall& c) {
  if (c.name.rfind("memcpy", 0) == 0 || c.name.rfind("memset", 0) == 0) return c.name;
  return "kernel " + (c.name.empty() ? std::string("(unnamed)") : c.name);
}

}  // namespace

std::string stream_words(TraceStream stream, TraceStream lab_stream) {
  stream = canonical(stream);
  if (stream == kLegacyStream) return "the legacy default stream";
  if (stream == kPerThreadStream) return "the per-thread default stream";
  if (stream == lab_stream) return "the lab's stream " + hex(stream);
  return "stream " + hex(stream) + " (a stream of the variant's)";
}

AuditFindings audit_iteration(const std::vector<TraceCall>& calls, TraceStream lab_stream) {
  lab_stream = canonical(lab_stream);
  AuditFindings f;
  std::map<TraceStream, std::uint64_t> count;  // work items enqueued per stream
  std::map<TraceStream, Covered> follows;      // what each stream's later work waits for
  std::map<std::uint64_t, Covered> events;     // what each recorded event completes after
  Covered host;                                // what the host has waited for
  auto snapshot = [&](TraceStream s) {
    Covered c = follows[s];
    c[s] = std::max(c[s], count[s]);
    return c;
  };
  // The legacy default stream and the blocking streams wait for each other's earlier work (CUDA Runtime API,
  // "Stream synchronization behavior"); the lab's stream is non-blocking.
  std::set<TraceStream> blocking;
  for (const TraceCall& c : calls)
    if (c.blocking && canonical(c.stream) != kLegacyStream && canonical(c.stream) != lab_stream)
      blocking.insert(canonical(c.stream));
  auto implicit_waits = [&](TraceStream s) {
    if (s == kLegacyStream) {
      for (const TraceStream b : blocking) merge_into(follows[kLegacyStream], snapshot(b));
    } else if (blocking.count(s)) {
      merge_into(follows[s], snapshot(kLegacyStream));
    }
  };
  for (const TraceCall& c : calls) {
    const TraceStream s = canonical(c.stream);
    if (c.kind == TraceCall::Kind::work || c.kind == TraceCall::Kind::event_record ||
        (c.kind == TraceCall::Kind::sync && c.scope == TraceCall::SyncScope::stream))
      implicit_waits(s);
    if (c.kind == TraceCall::Kind::sync && c.scope == TraceCall::SyncScope::copy) implicit_waits(kLegacyStream);
    switch (c.kind) {
      case TraceCall::Kind::work: ++count[s]; break;
      case TraceCall::Kind::event_record: events[c.event] = snapshot(s); break;
      case TraceCall::Kind::stream_wait: {
        const auto e = events.find(c.event);
        if (e != events.end()) merge_into(follows[s], e->second);
        break;
      }
      case TraceCall::Kind::sync:
        if (!c.declared) f.syncs.push_back(c.api);
        switch (c.scope) {
          case TraceCall::SyncScope::stream: merge_into(host, snapshot(s)); break;
          case TraceCall::SyncScope::copy: merge_into(host, snapshot(kLegacyStream)); break;
          case TraceCall::SyncScope::event: {
            const auto e = events.find(c.event);
            if (e != events.end()) merge_into(host, e->second);
            break;
          }
          case TraceCall::SyncScope::device:
            for (const auto& [stream, n] : count) host[stream] = std::max(host[stream], n);
            break;
        }
        break;
      case TraceCall::Kind::alloc:
        if (!c.declared) f.allocations.push_back(c.api);
        break;
      case TraceCall::Kind::stream_alloc:
        if (!c.declared) f.stream_ordered.push_back(c.api);
        break;
      case TraceCall::Kind::free:
        if (!c.declared) f.allocations.push_back(c.api);
        // cudaFree waits for the device before it frees (CUDA Runtime API, cudaFree).
        for (const auto& [stream, n] : count) host[stream] = std::max(host[stream], n);
        break;
    }
  }
  // What the iteration's end covers: the lab's stream's own work and what it waits for, and what the host waited for.
  Covered done = snapshot(lab_stream);
  merge_into(done, host);
  // The first uncovered item in host order is named.
  std::map<TraceStream, std::uint64_t> seen;
  for (const TraceCall& c : calls) {
    if (c.kind != TraceCall::Kind::work) continue;
    const TraceStream s = canonical(c.stream);
    const std::uint64_t index = seen[s]++;  // 0-based: covered when index < done[s]
    if (s == lab_stream || index < (done.count(s) ? done.at(s) : 0)) continue;
    f.escaped = work_words(c) + " on " + stream_words(s, lab_stream) + ", which " +
                stream_words(lab_stream, lab_stream) + " does not wait for before the iteration ends";
    break;
  }
  return f;
}

namespace {

std::string shape(const int (&d)[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string stream_name(TraceStream stream, TraceStream lab_stream) {
  stream = canonical(stream);
  if (stream == kLegacyStream) return "legacy default";
  if (stream == kPerThreadStream) return "per-thread default";
  if (stream == canonical(lab_stream)) return "lab";
  return hex(stream);
}

}  // namespace

std::vector<LaunchTime> launch_times(const std::vector<TraceCall>& calls, std::vector<TraceActivity> activity,
                                     TraceStream lab_stream) {
  std::map<std::uint32_t, TraceStream> stream_of;
  for (const TraceCall& c : calls) {
    if (c.kind != TraceCall::Kind::work) continue;
    if (c.correlation) stream_of.emplace(c.correlation, c.stream);
    if (c.driver_correlation) stream_of.emplace(c.driver_correlation, c.stream);
  }
  std::stable_sort(activity.begin(), activity.end(),
                   [](const TraceActivity& a, const TraceActivity& b) { return a.start_ns < b.start_ns; });
  std::vector<LaunchTime> out;
  out.reserve(activity.size());
  for (const TraceActivity& a : activity) {
    LaunchTime t;
    switch (a.kind) {
      case TraceActivity::Kind::kernel:
        t.kind = "kernel";
        t.name = kernel_name(a.name.c_str());
        t.grid = shape(a.grid);
        t.block = shape(a.block);
        break;
      case TraceActivity::Kind::memcpy:
        t.kind = "memcpy";
        t.name = a.name.empty() ? "memcpy" : a.name;
        t.bytes = static_cast<double>(a.bytes);
        break;
      case TraceActivity::Kind::memset:
        t.kind = "memset";
        t.name = "memset";
        t.bytes = static_cast<double>(a.bytes);
        break;
    }
    if (const auto it = stream_of.find(a.correlation); it != stream_of.end())
      t.stream = stream_name(it->second, lab_stream);
    t.time_s = a.end_ns >= a.start_ns ? static_cast<double>(a.end_ns - a.start_ns) * 1e-9 : 0.0;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace labrun
