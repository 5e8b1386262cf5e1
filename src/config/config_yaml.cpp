// Reading a config's YAML (config_yaml.hpp).
#include "config_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <system_error>

#include "format.hpp"  // printable, nearest

namespace labrun::config_yaml {

constexpr int kMaxDepth = 64;                 // deeper nesting only arises from recursive aliases
constexpr std::size_t kMaxNodes = 1'000'000;  // bounds alias expansion ("billion laughs")
// Bounds the text a document stands for once its aliases are expanded (its scalars and keys), so that no small file
// makes a command do work far beyond its size (case H13: 1 MB of aliases expanded to a 121 MB report).
constexpr std::size_t kMaxExpandedBytes = 10'000'000;

std::string most_used_alias(const std::string& text) {
  std::map<std::string, std::size_t> uses;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '*' || (i > 0 && !std::isspace(static_cast<unsigned char>(text[i - 1])) && text[i - 1] != '[' &&
                           text[i - 1] != ',' && text[i - 1] != ':' && text[i - 1] != '-'))
      continue;
    std::size_t j = i + 1;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) && text[j] != ',' && text[j] != ']' &&
           text[j] != '}')
      ++j;
    if (j > i + 1) ++uses[text.substr(i + 1, j - i - 1)];
    i = j - 1;
  }
  const auto top = std::max_element(uses.begin(), uses.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top == uses.end()) return "";
  return "*" + printable(top->first) + ", used " + std::to_string(top->second) + " time" +
         (top->second == 1 ? "" : "s");
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? ", " : "") + words[i];
  return out.empty() ? "none" : out;
}

std::string suggest(const std::string& word, const std::vector<std::string>& candidates) {
  const auto best = nearest(word, candidates);
  return best ? "; did you mean '" + *best + "'?" : "";
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    default: return "nothing";
  }
}

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::optional<double> parse_real(const std::string& text, std::string* why) {
  std::string_view s = text;
  // std::from_chars rejects a leading '+', which YAML and people write.
  if (s.size() > 1 && s[0] == '+' && (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.'))
    s.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size()) {
    *why = text + " is outside the range of a double";
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size()) {
    *why = "'" + text + "' is not a number";
    return std::nullopt;
  }
  if (!std::isfinite(value)) {
    *why = "'" + text + "' is not a finite number";
    return std::nullopt;
  }
  return value;
}

int second_document_line(const std::string& text) {
  bool content = false;
  int line = 1, marker_line = 0;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + start, end - start);
    const bool marker = (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
                        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker && content && !marker_line) marker_line = line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && l[first] != '#') {
      if (marker_line) return marker_line;
      content = true;
    }
    start = end + 1;
  }
  return 0;
}

void YamlReader::fail(const SourceLoc& at, const std::string& key, const std::string& message) const {
  throw ConfigError(at, key, message);
}

SourceLoc YamlReader::loc(const YAML::Node& node, const SourceLoc& fallback) const {
  if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
  return {file_, node.Mark().line + 1, node.Mark().column + 1};
}

void YamlReader::check_structure(const YAML::Node& node, const std::string& path, int depth, std::size_t& visited,
                                 std::size_t& bytes) const {
  const SourceLoc here = loc(node, {file_, 0, 0});
  if (depth > kMaxDepth)
    fail(here, path, "nested deeper than " + std::to_string(kMaxDepth) + " levels (a recursive alias?)");
  if (++visited > kMaxNodes)
    fail(here, path,
         "the document expands to more than " + std::to_string(kMaxNodes) + " nodes (aliases?)" + alias_named());
  bytes += 2 + (node.IsScalar() ? node.Scalar().size() : 0);
  if (bytes > kMaxExpandedBytes)
    fail(here, path,
         "the document expands to more than " + std::to_string(kMaxExpandedBytes / 1'000'000) +
             " MB of YAML through its aliases" + alias_named());
  check_tag(node, here, path);
  if (node.IsSequence()) {
    std::size_t index = 0;
    for (const auto& element : node)
      check_structure(element, path + "[" + std::to_string(index++) + "]", depth + 1, visited, bytes);
  } else if (node.IsMap()) {
    std::map<std::string, int> first_line;
    for (const auto& pair : node) {
      const SourceLoc key_loc = loc(pair.first, here);
      if (!pair.first.IsScalar()) fail(key_loc, path, "a key must be a plain word, not " + describe(pair.first));
      const std::string& key = pair.first.Scalar();
      const std::string key_path = child_path(path, key);
      check_tag(pair.first, key_loc, key_path);
      const auto [it, inserted] = first_line.emplace(key, key_loc.line);
      if (!inserted)
        fail(key_loc, key_path,
             "duplicate key '" + key + "' (first at line " + std::to_string(it->second) + ", again at line " +
                 std::to_string(key_loc.line) + ")");
      bytes += key.size();
      check_structure(pair.second, key_path, depth + 1, visited, bytes);
    }
  }
}

void YamlReader::check_tag(const YAML::Node& node, const SourceLoc& at, const std::string& path) const {
  const std::string& tag = node.Tag();
  if (tag.empty() || tag == "?" || tag == "!" || tag == "tag:yaml.org,2002:str") return;
  std::string shown = tag;
  if (shown.rfind("tag:yaml.org,2002:", 0) == 0) shown = "!!" + shown.substr(18);
  fail(at, path,
       "the YAML tag '" + shown +
           "' is not supported: labrun reads plain values (remove the tag; "
           "quote a value, or tag it !!str, to make it a string)");
}

std::vector<Entry> YamlReader::entries(const Item& map, const std::string& path) const {
  std::vector<Entry> out;
  for (const auto& pair : map.node) {
    Entry entry;
    entry.key = pair.first.Scalar();
    entry.path = child_path(path, entry.key);
    entry.key_loc = loc(pair.first, map.loc);
    entry.value = Item{pair.second, loc(pair.second, entry.key_loc)};
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<Item> YamlReader::elements(const Item& sequence) const {
  std::vector<Item> out;
  for (const auto& element : sequence.node) out.push_back(Item{element, loc(element, sequence.loc)});
  return out;
}

std::string YamlReader::scalar(const Item& item, const std::string& path, const std::string& expected) const {
  if (!item.node.IsScalar()) fail(item.loc, path, "expected " + expected + ", got " + describe(item.node));
  return item.node.Scalar();
}

bool YamlReader::string_scalar(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

std::string YamlReader::plain_text(const Item& item, const std::string& path, const std::string& expected,
                                   const std::string& kind) const {
  const std::string text = scalar(item, path, expected);
  if (string_scalar(item.node))
    fail(item.loc, path,
         "the string \"" + text + "\" where " + kind + " belongs (remove the quotes); expected " + expected);
  return text;
}

std::int64_t YamlReader::integer(const Item& item, const std::string& path, const std::string& expected) const {
  std::string why;
  const auto value = parse_exact_integer(plain_text(item, path, expected), &why);
  if (!value) fail(item.loc, path, why + "; expected " + expected);
  return *value;
}

double YamlReader::real(const Item& item, const std::string& path, const std::string& expected) const {
  std::string why;
  const auto value = parse_real(plain_text(item, path, expected), &why);
  if (!value) fail(item.loc, path, why + "; expected " + expected);
  return *value;
}

nlohmann::ordered_json YamlReader::to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      for (const auto& pair : node) object[pair.first.Scalar()] = to_json(pair.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (const auto& element : node) array.push_back(to_json(element));
      return array;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (string_scalar(node)) return text;
      std::string why;
      if (const auto i = parse_exact_integer(text, &why)) return *i;
      if (const auto d = parse_real(text, &why)) return *d;
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      return text;
    }
    default: return nullptr;
  }
}

std::string YamlReader::alias_named() const {
  const std::string alias = text_ ? most_used_alias(*text_) : "";
  return alias.empty() ? "" : " (alias " + alias + ")";
}

}  // namespace labrun::config_yaml
