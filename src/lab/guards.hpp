// The integrity checks' low-level parts (docs/integrity.md), for the host and CUDA workloads of the experiment SDK
// alike: the guard regions that fence the lab's memory (case C19) and how a write into one reads, the content hash
// that finds a changed input (case C20), and the seed of the second input set the re-check on fresh inputs draws
// (case C21).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace labrun {

/// Bytes of the guard region on each side of a fenced array: at least this many before it and after its last byte
/// (the region after also takes up the array's rounding to kFenceAlignment). A multiple of kFenceAlignment, so the
/// array keeps the alignment its allocation had (cudaMalloc's 256 bytes: vector loads and cuBLAS see what they would
/// see unfenced).
inline constexpr std::size_t kGuardBytes = 4096;
/// The alignment a fenced array keeps (cudaMalloc's, CUDA C++ Programming Guide "Device Memory"), bytes.
inline constexpr std::size_t kFenceAlignment = 256;
/// The byte every guard is filled with. A write of exactly this byte into a guard goes unseen (docs/integrity.md):
/// 0xa5a5a5a5 is -2.9e-16 as f32 and no index, count or NaN a kernel is likely to store.
inline constexpr std::uint8_t kGuardByte = 0xa5;

/// The elements of each output the re-check on fresh inputs compares at most (Compare's `sample`, evenly spaced): a
/// replayed or stale result differs almost everywhere, so a sample finds it at a small part of a full comparison's
/// cost (a comparison of 2^24 elements: about 0.16 s per point on the H200 machine's host in full).
inline constexpr std::int64_t kRecheckSampleElements = 65536;

/// Bytes a fenced allocation of `bytes` takes: the guard before, the array rounded up to kFenceAlignment, the guard
/// after.
inline std::size_t fenced_allocation_bytes(std::size_t bytes) {
  return kGuardBytes + (bytes + kFenceAlignment - 1) / kFenceAlignment * kFenceAlignment + kGuardBytes;
}

/// One fenced array, as a check of its guards names it: the array's name (or "memory from Launch::allocate #2"),
/// its element width (1 for raw memory) and its size, bytes. The guard before is [data - kGuardBytes, data); the
/// guard after is [data + bytes, data + after_guard_bytes()).
struct FencedArray {
  std::string name;
  std::size_t elem_bytes = 1;  ///< 1 with `raw`: offsets are then bytes
  std::size_t bytes = 0;
  bool raw = false;  ///< memory of no element type (Launch::allocate): offsets read "byte N", not "element N"
  /// Bytes of the guard after the array: kGuardBytes plus the rounding of `bytes` to kFenceAlignment.
  std::size_t after_guard_bytes() const { return fenced_allocation_bytes(bytes) - kGuardBytes - bytes; }
};

/// What a scan of one fenced array's guards found, byte offsets into each guard: in the guard before (kGuardBytes
/// bytes), the written byte nearest the array's start (the largest offset that no longer holds kGuardByte); in the
/// guard after (after_guard_bytes()), the first written byte. nullopt: that guard is intact. The host scans host
/// memory (scan_guards); the CUDA workload scans on the device and copies back only these two offsets.
struct GuardScan {
  std::optional<std::size_t> before_last;
  std::optional<std::size_t> after_first;
};

/// The scan of `array`'s guards from host copies of the guard before (kGuardBytes bytes) and after
/// (after_guard_bytes()).
GuardScan scan_guards(const FencedArray& array, const std::uint8_t* before, const std::uint8_t* after);

/// How a scan reads: nullopt when both guards are intact; else "wrote past the end of y (first at element 4206592)"
/// (the written byte nearest the array's end, as an element index of the array) or "wrote before the start of y
/// (nearest at element -1)" (the written byte nearest its start; a negative index). A write past the end is reported
/// before one before the start. Element indices count whole elements from the array's start (floor division for the
/// side before); a raw array's offsets are bytes ("first at byte 4108").
std::optional<std::string> guard_write_reason(const FencedArray& array, const GuardScan& scan);

/// guard_write_reason(array, scan_guards(array, before, after)).
std::optional<std::string> guard_write(const FencedArray& array, const std::uint8_t* before, const std::uint8_t* after);

/// A 64-bit hash of `bytes` bytes of host memory: the sum, modulo 2^64, over 8-byte words w_i (the last one padded
/// with zeros) of splitmix64(w_i ^ splitmix64(i)), in parallel chunks. Order-free, so the CUDA side's hash of the
/// same bytes (src/backends/cuda/integrity.cu) is the same number. A changed byte changes it except with
/// probability about 2^-64.
std::uint64_t content_hash(const void* data, std::size_t bytes);

/// The first element at which two arrays of `count` elements of `elem_bytes` bytes differ (bytewise); nullopt when
/// they are equal.
std::optional<std::int64_t> first_difference(const void* a, const void* b, std::int64_t count, std::size_t elem_bytes);

/// "changed input x at element 17": the reason a point that wrote into its input is `incorrect` with.
std::string input_change_reason(const std::string& input, std::optional<std::int64_t> element);

/// The lab seed the re-check on fresh inputs draws its second input set from: another seed than `lab_seed`, fixed
/// for it (so every process of a pooled sweep, and its reference cache, see the same second set).
std::uint64_t recheck_lab_seed(std::uint64_t lab_seed);

}  // namespace labrun
