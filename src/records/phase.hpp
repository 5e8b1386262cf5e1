// The phases of a point's lab pass, with their one name table (phase.cpp): the keys of a record's `phases`
// object, its `failed_phase`, and what a worker tells its supervisor on the status pipe. Adding a phase is a line
// of the enum, a row of the table (in order), and its description in docs/records.md.
#pragma once

#include <optional>
#include <string_view>

namespace labrun {

/// A phase of the lab pass (docs/metrics.md), in the order a point goes through them; `done` is no phase of the
/// pass but what the PhaseListener is told once a point's record went to the sink.
enum class Phase { environment, setup, warmup, correctness, timing, integrity, interpretation, done };

/// The phases of the lab pass, in order (every Phase but done): the keys of a record's `phases`.
inline constexpr Phase kPhases[] = {Phase::environment, Phase::setup,     Phase::warmup,        Phase::correctness,
                                    Phase::timing,      Phase::integrity, Phase::interpretation};

/// The phase's spelling in records and on the status pipe ("environment", ..., "done").
const char* to_string(Phase phase);

/// The phase spelled `name` (as to_string writes it), or nullopt for any other text.
std::optional<Phase> parse_phase(std::string_view name);

}  // namespace labrun
