// Text as people write it in configs and on the command line: exact decimals and integers (case C02), and the
// nearest valid word for a typo. Declared in config.hpp, which every caller already includes.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"

namespace labrun {

std::optional<double> parse_decimal(const std::string& text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const double value = std::strtod(text.c_str(), nullptr);  // the text is a plain decimal by now
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::optional<std::int64_t> parse_exact_integer(const std::string& text, std::string* why) {
  auto fail = [why](std::string reason) -> std::optional<std::int64_t> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const std::string not_a_number = "'" + text + "' is not a decimal number";

  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;  // integer part followed by fraction part
  std::size_t fraction_digits = 0;
  while (i < text.size() && is_digit(text[i])) digits += text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) {
      digits += text[i++];
      ++fraction_digits;
    }
  }
  if (digits.empty()) return fail(not_a_number);

  // The exponent is clamped far beyond any meaningful value so that absurdly long exponents cannot overflow;
  // a clamped exponent still gives the right verdict (zero, not an integer, or out of range).
  constexpr std::int64_t kExponentCap = 1'000'000'000'000'000;
  std::int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    const std::size_t start = i;
    while (i < text.size() && is_digit(text[i])) {
      if (exponent < kExponentCap) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == start) return fail(not_a_number);
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) return fail(not_a_number);

  // value = digits * 10^scale. Strip the zeros at both ends of the digit string so that it is integral
  // exactly when the remaining scale is >= 0.
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 0;
  const std::size_t last = digits.find_last_not_of('0');
  const std::int64_t scale = exponent - static_cast<std::int64_t>(fraction_digits) +
                             static_cast<std::int64_t>(digits.size() - 1 - last);
  if (scale < 0) return fail(text + " is not an integer");
  const std::string_view significant(digits.data() + first, last + 1 - first);
  const std::string out_of_range = text + " is outside the 64-bit integer range";
  // Nineteen decimal digits always fit in uint64 (10^19 - 1 < 2^64), so the magnitude is computed exactly.
  if (static_cast<std::int64_t>(significant.size()) + scale > 19) return fail(out_of_range);
  std::uint64_t magnitude = 0;
  for (char c : significant) magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
  for (std::int64_t k = 0; k < scale; ++k) magnitude *= 10;
  const std::uint64_t limit =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
  if (magnitude > limit) return fail(out_of_range);
  if (!negative) return static_cast<std::int64_t>(magnitude);
  if (magnitude == limit) return std::numeric_limits<std::int64_t>::min();
  return -static_cast<std::int64_t>(magnitude);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (best && best_distance <= std::max<std::size_t>(2, word.size() / 3)) return best;
  return std::nullopt;
}

}  // namespace labrun
