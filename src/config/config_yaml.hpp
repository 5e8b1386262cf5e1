// Reading a config's YAML (config.cpp's Parser reads what the keys mean): the document's structure checked before
// any key is read (duplicate keys at any depth, keys that are not plain words, tags, aliases that recurse or expand
// past a bound), its maps and lists with the place each was written, and scalars read strictly (a quoted "0.5" is a
// string). Every error is a ConfigError with file, line and key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "config.hpp"

namespace labrun::config_yaml {

/// "a, b, c" ("none" for no words).
std::string join(const std::vector<std::string>& words);

/// "; did you mean 'x'?" when a candidate is close to `word`, else "".
std::string suggest(const std::string& word, const std::vector<std::string>& candidates);

/// What a node is, for a message: "a map", "a list", 'text' or "nothing".
std::string describe(const YAML::Node& node);

/// `path`.`key`, or `key` at the top.
std::string child_path(const std::string& path, const std::string& key);

/// Strict full-text parse of a finite double; sets `why` otherwise.
std::optional<double> parse_real(const std::string& text, std::string* why);

/// The alias `text` uses most ("*name, used N times"), to name in an expansion error; "" when it uses none.
std::string most_used_alias(const std::string& text);

/// The 1-based line of a document marker ("---" or "...") with content both before and after it, i.e. the start of
/// a second document; 0 if there is none. A leading "---" starts the first document, a trailing "..." ends it.
int second_document_line(const std::string& text);

/// A YAML node with the place it was written; `loc` falls back to the enclosing key for empty values,
/// whose yaml-cpp mark points at the next token instead.
struct Item {
  YAML::Node node;
  SourceLoc loc;
};

/// One key of a map.
struct Entry {
  std::string key;
  std::string path;  ///< dotted path of the key, e.g. "lab.seed"
  SourceLoc key_loc;
  Item value;
};

/// The YAML side of a config parser: what a derived parser (config.cpp's) calls to walk the document.
class YamlReader {
 protected:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const SourceLoc& at, const std::string& key, const std::string& message) const;

  SourceLoc loc(const YAML::Node& node, const SourceLoc& fallback) const;

  /// Rejects what yaml-cpp lets through: duplicate keys at any depth (C01), keys that are not plain scalars,
  /// and recursive or exploding aliases. Runs over the whole document before any key is interpreted.
  void check_structure(const YAML::Node& node, const std::string& path, int depth, std::size_t& visited,
                       std::size_t& bytes) const;

  /// Case H10: a YAML tag other than !!str (`experiment: !custom NAME`, `!!float 1000`) would be dropped silently,
  /// since labrun reads a value by its text; it is refused instead. Allowed: no tag, the non-specific tags of plain
  /// ("?") and quoted ("!") scalars, and !!str (docs/config.md). @throws ConfigError naming the tag.
  void check_tag(const YAML::Node& node, const SourceLoc& at, const std::string& path) const;

  /// The keys of a map in the order written. Keys are known to be unique scalars (check_structure).
  std::vector<Entry> entries(const Item& map, const std::string& path) const;

  std::vector<Item> elements(const Item& sequence) const;

  std::string scalar(const Item& item, const std::string& path, const std::string& expected) const;

  // Whether a scalar is a string by its form: quoted or !!str-tagged.
  static bool string_scalar(const YAML::Node& node);

  // A plain scalar's text where `kind` (a number, a boolean) belongs. A quoted or !!str-tagged scalar is a string,
  // even if it reads like one ("0.5", "true"): taking it as one would hide a type mistake in the config (case C03).
  std::string plain_text(const Item& item, const std::string& path, const std::string& expected,
                         const std::string& kind = "a number") const;

  std::int64_t integer(const Item& item, const std::string& path, const std::string& expected) const;

  double real(const Item& item, const std::string& path, const std::string& expected) const;

  /// Converts any YAML to JSON, keeping map order. Quoted scalars stay strings; plain ones become an integer
  /// (exact, so `1e7` is 10000000), else a finite number, else true/false, else a string.
  static nlohmann::ordered_json to_json(const YAML::Node& node);

  // " (alias *NAME, used N times)": the alias the text uses most, for an expansion past a bound; "" for none.
  std::string alias_named() const;

  std::string file_;
  const std::string* text_ = nullptr;  ///< the text being parsed, for naming the alias of an expansion past a bound
};

}  // namespace labrun::config_yaml
