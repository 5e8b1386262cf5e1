// Text for notes, reports and diffs: numbers with three significant figures and an SI prefix, times, rates,
// bytes, percentages, axis values and axes. The one place labrun's formatting helpers live. Every function is
// pure and never throws; a non-finite value reads "n/a" unless a function says otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "record.hpp"

namespace labrun {

/// Three significant figures of a value already scaled to [1, 1000) (e.g. by an SI prefix): 114.3 → "114",
/// 2.994 → "2.99", 10.04 → "10.0". Outside that range it keeps the same decimals rule ("{:.0f}" from 99.95 up).
std::string format_sig3(double scaled);
/// `value` with three significant figures and a decimal SI prefix (k, M, G, T, P, E) before `unit`:
/// format_si(4.37e12, "B/s") is "4.37 TB/s", format_si(850, "B") "850 B". No prefix below 1 (0.5 → "0.50 B").
std::string format_si(double value, const std::string& unit);
/// A count with its noun: format_count(1, "launch", "launches") is "1 launch", (3, ...) "3 launches"; the
/// number as format_number() writes it.
std::string format_count(double count, const std::string& one, const std::string& many);

/// Seconds as "114 µs", "2.99 ms", "850 ns", "1.50 s"; "0 s" for zero.
std::string format_time(double seconds);
/// `text` safe to show on a terminal, in report.md or points.csv (case H10): C0 and C1 control characters and
/// DEL (ESC starts terminal escape sequences) and the Unicode bidirectional and invisible format controls (U+061C,
/// U+200B-U+200F, U+202A-U+202E, U+2060-U+2069, U+FEFF: U+202E reverses the text after it) are written as
/// visible escapes, `\x1b` and `\u202e`; a byte that is not UTF-8 as `\xff`. Everything else is unchanged.
/// With `keep_lines`, newlines and tabs stay (for a whole rendered table or document).
std::string printable(const std::string& text, bool keep_lines = false);
/// Terminal columns of UTF-8 text: its code points ("µs" is 3 bytes, 2 columns), for aligning tables.
std::size_t display_width(const std::string& text);
/// A wall-clock span for progress lines, whole seconds: "7s", "3m05s", "2h04m"; "?" when not finite or negative.
std::string format_duration(double seconds);
/// A rate in base units per second with an SI prefix: format_rate(4.37e12, "B/s") is "4.37 TB/s".
std::string format_rate(double per_second, const std::string& unit);
/// Bytes as "500 MB" (decimal prefixes).
std::string format_bytes(double bytes);
/// A fraction as a percentage: 0.987 → "99%", 0.0123 → "1.2%", 0.00012 → "0.012%", 0 → "0%".
std::string format_percent(double fraction);
/// A number short and exact enough for axis values: 1e8 → "1e8", 1600000 → "1.6e6", 0.04 → "0.04",
/// 1024 → "1024"; "NaN", "inf", "-inf" for non-finite values.
std::string format_number(double value);
/// One axis value (JSON number, json_real string or word) as text; integers beyond 2^53 are written out in
/// full (they are not exact as doubles).
std::string format_axis_value(const Json& value);
/// Axes as "x=1e8, y=0.7, mode=graph", in the object's order; only the names in `only` when it is not empty.
/// "" when `axes` is not an object.
std::string format_axes(const Json& axes, const std::vector<std::string>& only = {});

}  // namespace labrun
