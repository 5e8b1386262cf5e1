#include "format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace labrun {

std::string format_sig3(double v) {
  const double a = std::fabs(v);
  if (a >= 99.95) return fmt::format("{:.0f}", v);
  if (a >= 9.995) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string format_si(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "n/a";
  static const char* const kUp[] = {"", "k", "M", "G", "T", "P", "E"};
  double a = std::fabs(v);
  int k = 0;
  while (a >= 999.5 && k < 6) {
    a /= 1000;
    v /= 1000;
    ++k;
  }
  return format_sig3(v) + " " + kUp[k] + unit;
}

std::string format_count(double count, const std::string& one, const std::string& many) {
  return format_number(count) + " " + (count == 1 ? one : many);
}

std::size_t display_width(const std::string& text) {
  std::size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;  // count every byte but UTF-8 continuation bytes
  return columns;
}

std::string format_time(double s) {
  if (!std::isfinite(s)) return "n/a";
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return format_sig3(s * 1e9) + " ns";
  if (a < 1e-3) return format_sig3(s * 1e6) + " µs";
  if (a < 1) return format_sig3(s * 1e3) + " ms";
  return format_sig3(s) + " s";
}

std::string format_rate(double per_second, const std::string& unit) { return format_si(per_second, unit); }

std::string format_bytes(double bytes) { return format_si(bytes, "B"); }

std::string format_percent(double f) {
  if (!std::isfinite(f)) return "n/a";
  const double p = f * 100;
  const double a = std::fabs(p);
  if (a >= 9.95) return fmt::format("{:.0f}%", p);
  if (a >= 0.995) return fmt::format("{:.1f}%", p);
  if (a >= 0.00995) return fmt::format("{:.2g}%", p);
  return a == 0 ? "0%" : fmt::format("{:.1e}%", p);
}

std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a >= 1e4 && a < 1e18 && v == std::floor(v)) {
    // Integers: mantissa-exponent form when they have at most 3 significant digits (1e8, 2.5e7, 1.6e6).
    const int e = static_cast<int>(std::floor(std::log10(a)));
    const double m = v / std::pow(10.0, e);
    const double m3 = std::round(m * 100) / 100;
    if (std::fabs(m - m3) < 1e-9) return fmt::format("{}e{}", m3, e);
    return fmt::format("{:.0f}", v);
  }
  if (v == std::floor(v) && a < 1e4) return fmt::format("{:.0f}", v);
  std::string s = fmt::format("{:.3g}", v);
  // "3.2e+07" → "3.2e7", "1e-05" → "1e-5".
  const auto e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

namespace {

/// The code point of the UTF-8 sequence at `text[i]` and its length in bytes; length 0 when it is not UTF-8.
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return {c, 1};
  const std::size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size() || (n == 3 && c >= 0xf0)) return {0, 0};
  char32_t cp = c & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {cp, n};
}

/// Whether code point `cp` changes how a terminal shows what follows instead of showing itself.
bool hidden_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

}  // namespace

std::string printable(const std::string& text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, n] = decode_utf8(text, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      i += 1;
      continue;
    }
    if (!hidden_control(cp) || (keep_lines && (cp == '\n' || cp == '\t'))) out.append(text, i, n);
    else if (cp < 0x80) out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    i += n;
  }
  return out;
}

std::string format_axis_value(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") return format_number(real_from_json(v));
    return printable(s);
  }
  // Integers beyond 2^53 are not exact as doubles: written out in full (case C14).
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > (std::uint64_t{1} << 53)) return v.dump();
  if (v.is_number_integer() && !v.is_number_unsigned() && std::llabs(v.get<std::int64_t>()) > (std::int64_t{1} << 53))
    return v.dump();
  if (v.is_number()) return format_number(v.get<double>());
  return v.dump();
}

std::string format_axes(const Json& axes, const std::vector<std::string>& only) {
  std::string out;
  if (!axes.is_object()) return out;
  for (const auto& [k, v] : axes.items()) {
    if (!only.empty() && std::find(only.begin(), only.end(), k) == only.end()) continue;
    if (!out.empty()) out += ", ";
    out += printable(k) + "=" + format_axis_value(v);
  }
  return out;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace labrun
