// One name table per enum of the record vocabulary (statuses, phases, timing methods): each value with its
// spelling in records, listed once. to_string, parse and the list in error messages all read the table, so
// adding a value is one row (and the enum's line).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace labrun {

/// One row of a name table: an enum value and its spelling (lower case, as records write it). A table whose rows
/// say more (a status's failure flag) uses its own row type with the members `value` and `name`.
template <class E>
struct Named {
  E value;
  const char* name;
};

/// The spelling of `value` in `table`, or "?" when the table lacks it (a table that misses a value of its enum).
template <class Row, std::size_t N>
constexpr const char* name_in(const Row (&table)[N], decltype(Row::value) value) {
  for (const Row& row : table)
    if (row.value == value) return row.name;
  return "?";
}

/// The row of `value` in `table`, or nullptr.
template <class Row, std::size_t N>
constexpr const Row* row_in(const Row (&table)[N], decltype(Row::value) value) {
  for (const Row& row : table)
    if (row.value == value) return &row;
  return nullptr;
}

/// The value spelled `name` in `table` (exact, case-sensitive), or nullopt.
template <class Row, std::size_t N>
constexpr std::optional<decltype(Row::value)> parse_in(const Row (&table)[N], std::string_view name) {
  for (const Row& row : table)
    if (name == row.name) return row.value;
  return std::nullopt;
}

/// Every spelling of `table` in table order, joined by ", " ("ok, incorrect, ...").
template <class Row, std::size_t N>
std::string names_in(const Row (&table)[N]) {
  std::string out;
  for (const Row& row : table) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

}  // namespace labrun
