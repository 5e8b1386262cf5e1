// Text as people write it in configs and on the command line: exact decimals and integers (case C02), and the
// nearest valid word for a typo. Declared in config.hpp, which every caller already includes.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <cstdio>
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
  const std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
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

namespace {

// Length of the UTF-8 sequence starting at text[i] (1-4), or 0 if it is not a valid one (overlong forms,
// surrogates and code points above U+10FFFF included: RFC 3629).
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f;
  else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f;
  else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07;
  else return 0;
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

void check_config_text(const std::string& text, const std::string& path) {
  if (text.size() > kMaxConfigBytes)
    throw ConfigError({path, 0, 0}, "",
                      "the config is larger than " + std::to_string(kMaxConfigBytes) +
                          " bytes (1 MiB), more than any sweep needs; is it the right file?");
  int line = 1, column = 1, depth = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    if (len == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      const bool utf16 = i < 2 && text.size() >= 2 &&
                         ((c == 0xff && static_cast<unsigned char>(text[1]) == 0xfe) ||
                          (c == 0xfe && static_cast<unsigned char>(text[1]) == 0xff));
      throw ConfigError({path, line, column}, "",
                        std::string("byte ") + hex + " is not valid UTF-8" +
                            (utf16 ? " (the file is UTF-16: save it as UTF-8)"
                                   : " (a Latin-1 file? save it as UTF-8)"));
    }
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", c);
      throw ConfigError({path, line, column}, "", std::string("control character ") + code + " in the config");
    }
    if (c == 0x7f) throw ConfigError({path, line, column}, "", "control character U+007F in the config");
    if (c == '\n') {
      ++line;
      column = 1;
      comment = false;
      if (quote == '\'') quote = 0;  // a plain multi-line single quote is rare; do not let one run away
      i += 1;
      continue;
    }
    if (!comment) {
      if (quote) {
        if (c == static_cast<unsigned char>(quote)) quote = 0;
        else if (quote == '"' && c == '\\') ++i, ++column;  // skip the escaped character
      } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
        comment = true;
      } else if (c == '"' || c == '\'') {
        quote = static_cast<char>(c);
      } else if (c == '[' || c == '{') {
        if (++depth > 64)
          throw ConfigError({path, line, column}, "", "flow collections ([ ] { }) nested deeper than 64 levels");
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
    i += len;
    ++column;
  }
}

std::string bound_text(double bound) {
  if (std::trunc(bound) == bound && std::fabs(bound) < 9e18) return std::to_string(static_cast<std::int64_t>(bound));
  return to_string(AxisValue{bound});
}

double tidy(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", value);
  double out = value;
  std::from_chars(buf, buf + std::strlen(buf), out);
  return out;
}

}  // namespace labrun
