// The reading checks of the record tables (record_fields.hpp): one place for each JSON type's test and message.
#include "record_fields.hpp"

#include <limits>
#include <stdexcept>

namespace labrun::fields {

std::string shown(const Json& v) {
  std::string text = v.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

std::string at(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

void bad(const std::string& where, const char* expected, const Json& got) {
  std::string text = got.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  throw ResultError((where.empty() ? std::string("record") : where) + ": expected " + expected + ", got " + text);
}

void require_object(const Json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "an object", j);
}

double real_of(const Json& v, const std::string& where) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return real_from_json(v);
    } catch (const std::invalid_argument&) {
    }
  }
  bad(where, "a number", v);
}

void Int::read(const Json& v, const std::string& where, std::int64_t& out) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      out = static_cast<std::int64_t>(u);
      return;
    }
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
    return;
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
      out = static_cast<std::int64_t>(d);
      return;
    }
  }
  bad(where, "an integer", v);
}

void Text::read(const Json& v, const std::string& where, std::string& out) {
  if (!v.is_string()) bad(where, "a string", v);
  out = v.get<std::string>();
}

void RequiredText::missing(const char* key) { throw ResultError(std::string("point record has no \"") + key + "\""); }

void OptText::read(const Json& v, const std::string& where, std::optional<std::string>& out) {
  if (!v.is_string()) bad(where, "a string or null", v);
  out = v.get<std::string>();
}

void Flag::read(const Json& v, const std::string& where, bool& out) {
  if (!v.is_boolean()) bad(where, "true or false", v);
  out = v.get<bool>();
}

void Reals::read(const Json& v, const std::string& where, std::vector<double>& out) {
  if (!v.is_array()) bad(where, "an array of numbers", v);
  out.clear();
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(real_of(v[i], where + "[" + std::to_string(i) + "]"));
}

void Texts::read(const Json& v, const std::string& where, std::vector<std::string>& out) {
  if (!v.is_array()) bad(where, "an array of strings", v);
  out.clear();
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    Text::read(v[i], where + "[" + std::to_string(i) + "]", out.emplace_back());
}

}  // namespace labrun::fields
