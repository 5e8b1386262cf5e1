// The integrity test aid (docs/integrity.md, cases C19-C21): an SDK experiment, y = 2x + 1 over n floats, whose
// variants plant the faults the lab's integrity checks must name, each followed by a correct variant that must stay
// `ok` (a fault never lands on the variant after it). Linked into labrun_testaid only, with LABRUN_EXPERIMENT
// (integrity.cpp, host) and LABRUN_CUDA_VARIANTS (integrity.cu); run with tests/aids/integrity.yaml.
#pragma once

#include <cstdint>

#include "variant_row.hpp"

namespace labrun::integrity_aid {

/// What a variant does wrong.
enum class Fault {
  none,               ///< y = 2x + 1, correct
  past_end,           ///< also writes y[n], one element past the end of its output (C19)
  before_start,       ///< also writes y[-1], one element before its start (C19)
  scratch_guard,      ///< also writes work[n], past the end of its scratch array (C19)
  allocated_guard,    ///< also writes one element past the end of memory from Launch::allocate (C19)
  writes_input,       ///< correct y, then x[0] changed, every call (C20)
  writes_input_late,  ///< correct y; from its kLateCall-th call on (during timing) also changes x[0] (C20)
  replays_cache,      ///< computes at its first call into memory of its own, copies that every later call (C21)
  setup_work,         ///< computes y from the inputs in its setup; the iteration only copies it (C21)
  tail_unwritten,     ///< leaves y[n - 1] unwritten (C07: the NaN poison)
};

/// The call from which writes_input_late writes into its input: after the aid config's warmup (2 iterations) and
/// the correctness iteration, inside timing.
inline constexpr std::int64_t kLateCall = 10;

/// One row of the variant table: the variant's name, its fault and what it does.
using Row = aids::VariantRow<Fault>;

/// The variants in declaration order: each faulty one followed by a correct one named "after_<fault>".
inline constexpr Row kVariants[] = {
    {"correct", Fault::none, "y = 2x + 1"},
    {"past_end", Fault::past_end, "also writes y[n], one past the end"},
    {"after_past_end", Fault::none, "correct, after past_end"},
    {"before_start", Fault::before_start, "also writes y[-1], one before the start"},
    {"after_before_start", Fault::none, "correct, after before_start"},
    {"scratch_guard", Fault::scratch_guard, "also writes work[n], past the end of its scratch array"},
    {"after_scratch_guard", Fault::none, "correct, after scratch_guard"},
    {"allocated_guard", Fault::allocated_guard, "also writes past the end of its Launch::allocate memory"},
    {"after_allocated_guard", Fault::none, "correct, after allocated_guard"},
    {"writes_input", Fault::writes_input, "correct y, then changes x[0] every call"},
    {"after_writes_input", Fault::none, "correct, after writes_input"},
    {"writes_input_late", Fault::writes_input_late, "correct y; from its 10th call on also changes x[0]"},
    {"after_writes_input_late", Fault::none, "correct, after writes_input_late"},
    {"replays_cache", Fault::replays_cache, "computes at its first call, then copies that result every call"},
    {"after_replays_cache", Fault::none, "correct, after replays_cache"},
    {"setup_work", Fault::setup_work, "computes y from the inputs in its setup; the iteration copies it"},
    {"after_setup_work", Fault::none, "correct, after setup_work"},
    {"tail_unwritten", Fault::tail_unwritten, "leaves y[n - 1] unwritten"},
    {"after_tail_unwritten", Fault::none, "correct, after tail_unwritten"},
};

}  // namespace labrun::integrity_aid
