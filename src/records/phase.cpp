#include "phase.hpp"

#include "name_table.hpp"

namespace labrun {

namespace {

// The one place a phase is spelled.
constexpr Named<Phase> kPhaseNames[] = {
    {Phase::environment, "environment"},       {Phase::setup, "setup"},   {Phase::warmup, "warmup"},
    {Phase::correctness, "correctness"},       {Phase::timing, "timing"}, {Phase::integrity, "integrity"},
    {Phase::interpretation, "interpretation"}, {Phase::done, "done"},
};

}  // namespace

const char* to_string(Phase phase) { return name_in(kPhaseNames, phase); }

std::optional<Phase> parse_phase(std::string_view name) { return parse_in(kPhaseNames, name); }

}  // namespace labrun
