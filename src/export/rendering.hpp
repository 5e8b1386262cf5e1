// How a command's result is written to standard output (`--format NAME` of diff and history): one Rendering per
// format, listed in one table per result type (Renderings), first the default. The command takes the format's
// names, its --help text and its error from the table, so a new rendering is one row.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace labrun {

/// One rendering of a result of type T: the name --format takes and the text it writes (whole, newline-terminated).
template <class T>
struct Rendering {
  std::string name;
  std::function<std::string(const T&)> render;
};

/// The renderings of T, the first one the default. @tparam T the result type (DiffResult, HistoryResult).
template <class T>
class Renderings {
 public:
  explicit Renderings(std::vector<Rendering<T>> rows) : rows_(std::move(rows)) {}
  /// The rendering named `name`, or nullptr.
  const Rendering<T>* find(const std::string& name) const {
    for (const auto& r : rows_)
      if (r.name == name) return &r;
    return nullptr;
  }
  /// The default's name ("table").
  const std::string& default_name() const { return rows_.front().name; }
  /// The names as a list for a message: "table, markdown or json".
  std::string names() const { return listed(false); }
  /// The --format option's help: "table (default), markdown or json".
  std::string help() const { return listed(true); }

 private:
  // "a, b or c", the first marked " (default)" when `mark_default`.
  std::string listed(bool mark_default) const {
    std::string text;
    for (std::size_t i = 0; i < rows_.size(); ++i)
      text += (i == 0                  ? ""
               : i + 1 == rows_.size() ? " or "
                                       : ", ") +
              rows_[i].name + (i == 0 && mark_default ? " (default)" : "");
    return text;
  }
  std::vector<Rendering<T>> rows_;
};

}  // namespace labrun
