// What history.cpp (the series, the steps) and history_groups.cpp (the steps of many points gathered at one
// commit) share. Nothing outside src/history/history*.cpp includes it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "history.hpp"
#include "history_fit.hpp"

namespace labrun::history_detail {

/// The environment changes over a step's commits (before, after]: what changed ("" for nothing), and whether only
/// instance fields did (GPU uuid, host: the same GPU model, driver, runtime and build type).
struct SpanChange {
  std::string change;
  bool instance_only = true;
};

/// The environment changes over a step's commits (before, after] (SpanChange).
SpanChange span_change(const std::vector<HistoryCommit>& commits, std::size_t before, std::size_t after);

/// Observation positions of a step: its stretch [prev, next) between the neighbouring boundaries, s the first
/// run off the old level, e the first at the new one.
struct Span {
  std::size_t prev = 0, s = 0, e = 0, next = 0;
};

/// The steps found (|size| >= min_effect) before grouping, in the order found, with what grouping needs of each.
struct FoundSteps {
  std::vector<HistoryStep> all;
  std::vector<Span> spans;
  std::vector<std::pair<bool, std::string>> normalized_env;  // per step: vanished with the ceiling out, and why
};

/// The environment label of a step from the commits it spans (and whether it vanished normalised).
void relabel(const std::vector<HistoryCommit>& commits, HistoryStep& step,
             const std::pair<bool, std::string>& normalized);

/// Groups: the commit with the most steps of one direction first, with the steps within one commit of it; the
/// group's commit from its members' mean shape, the members moved to it, then split by their environment label.
std::vector<HistoryGroup> group_steps(const HistoryResult& h, const std::vector<history_fit::PointFit>& fits,
                                      FoundSteps& found);

/// Sets h.steps (in commit order, then by size) and h.groups (their indices remapped, summarised, by commit then
/// size).
void order_steps(const std::vector<HistoryStep>& all, std::vector<HistoryGroup> groups, HistoryResult& h);

/// Notes the steps labelled code although they coincide with another GPU (or host) of the same kind.
void note_instance_steps(HistoryResult& h);

/// Sets h.newest (the groups with a step at the newest commit) and h.fail per options.fail_on.
void judge_newest(HistoryResult& h);

}  // namespace labrun::history_detail
