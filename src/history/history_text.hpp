// The cells and sentences labrun history's outputs share (history_table.cpp, history_markdown.cpp, history_json.cpp,
// history_bisect.cpp): internal to src/history/.
#pragma once

#include <cstddef>
#include <string>

#include "history.hpp"

namespace labrun::history_text {

/// The first 10 characters of a sha.
std::string short_sha(const std::string& sha);
/// A ratio as a signed change: 1.102 -> "+10.2%".
std::string percent(double ratio);
/// A group's label: its kind and, for an environment or tool step, why.
std::string label(const HistoryGroup& g);
/// "last-before..first-after" (with the first run of the new level where it differs), short shas.
std::string where(const HistoryResult& h, std::size_t before, std::size_t start, std::size_t after);
/// A group's change: "+10.2% (+9.8..+10.6%)".
std::string group_size(const HistoryGroup& g);
/// A group's bound class, or the classes it spans.
std::string group_bound(const HistoryGroup& g);
/// The keys of a group's points, the first few.
std::string group_points(const HistoryResult& h, const HistoryGroup& g);
/// A group as a sentence for the markdown's heading.
std::string group_sentence(const HistoryResult& h, const HistoryGroup& g);
/// The point's axes as --only takes them.
std::string axes_only(const HistorySeries& s);

}  // namespace labrun::history_text
