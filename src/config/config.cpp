#include "config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "format.hpp"       // printable
#include "output_file.hpp"  // describe_file_type
#include "registry.hpp"
#include "sha256.hpp"
#include "config_range.hpp"
#include "config_yaml.hpp"

namespace labrun {

namespace {

std::string format_what(const SourceLoc& loc, const std::string& key, const std::string& message) {
  // The file's name and the key as the user wrote them, their control characters escaped (a newline in a name
  // would start a line of its own: case H10).
  std::string out = printable(loc.file) + ":" + std::to_string(loc.line) + ": ";
  // Errors that belong to no key (unreadable file, YAML syntax) have nothing to quote.
  if (!key.empty()) out += "key '" + printable(key) + "': ";
  return out + message;
}

}  // namespace

ConfigError::ConfigError(SourceLoc loc, std::string key, std::string message)
    : std::runtime_error(format_what(loc, key, message)), loc_(std::move(loc)), key_(std::move(key)),
      message_(std::move(message)) {}

namespace {

using namespace config_yaml;

constexpr std::size_t kMaxHypotheses = 1000;  // claims a report judges one by one

const std::vector<std::string> kTopKeys = {"experiment", "description", "axes",      "variants",
                                           "exclude",    "lab",         "hypothesis"};
/// The config's keys read and checked against the experiment's registration (YamlReader reads the YAML,
/// RangeReader an axis' ranges and bounds).
class Parser : public config_yaml::RangeReader {
 public:
  Parser(std::string file, const Registry& registry) : RangeReader(std::move(file)), registry_(registry) {}

  void parse(const std::string& text, SweepConfig& out) {
    check_config_text(text, file_);
    // One document: a second one is found by its marker, so the parser is YAML::Load, never LoadAll, which in
    // yaml-cpp 0.7.0 (Debian's) grows without bound on inputs as small as "," (yaml-cpp issue 1040).
    if (const int second = second_document_line(text))
      fail(SourceLoc{file_, second, 1}, "", "a config holds one YAML document; found a second one ('---')");
    YAML::Node document;
    try {
      document = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
      const int column = e.mark.is_null() ? 0 : e.mark.column + 1;
      throw ConfigError({file_, line, column}, "", "YAML syntax error: " + e.msg);
    }
    const SourceLoc start{file_, 1, 1};
    if (!document || document.IsNull()) {
      const bool blank = std::all_of(text.begin(), text.end(),
                                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
      fail(start, "experiment",
           blank ? "the config is empty; it needs at least 'experiment: NAME'"
                 : "the config holds no YAML map of keys; it needs at least 'experiment: NAME'");
    }
    const YAML::Node& root = document;
    if (!root.IsMap())
      fail(loc(root, start), "", "the config must be a map of keys (" + join(kTopKeys) + "), got " + describe(root));

    std::size_t visited = 0, bytes = 0;
    text_ = &text;
    check_structure(root, "", 0, visited, bytes);
    text_ = nullptr;

    std::map<std::string, Entry> top;
    for (auto& entry : entries(Item{root, loc(root, start)}, "")) {
      if (std::find(kTopKeys.begin(), kTopKeys.end(), entry.key) == kTopKeys.end())
        fail(entry.key_loc, entry.path,
             "unknown key" + suggest(entry.key, kTopKeys) + " (valid keys: " + join(kTopKeys) + ")");
      top.emplace(entry.key, std::move(entry));
    }

    const auto experiment_entry = top.find("experiment");
    if (experiment_entry == top.end())
      fail(loc(root, start), "experiment",
           "required key is missing; registered experiments: " + join(registry_.names()));
    const RegisteredExperiment& experiment = parse_experiment(experiment_entry->second);
    out.experiment = experiment.name();

    if (auto it = top.find("description"); it != top.end())
      out.description = scalar(it->second.value, it->second.path, "a one-line description");
    if (auto it = top.find("axes"); it != top.end()) out.axes = parse_axes(it->second, experiment);
    if (auto it = top.find("variants"); it != top.end()) out.variants = parse_variants(it->second, experiment);
    if (auto it = top.find("exclude"); it != top.end()) {
      out.excludes = parse_excludes(it->second, experiment);
      check_excludes_match(out, it->second.path);
    }
    if (auto it = top.find("lab"); it != top.end())
      out.lab = parse_lab(it->second, LabSettings{}, "the default", &out.lab_by_backend);
    if (auto it = top.find("hypothesis"); it != top.end()) {
      check_hypothesis(it->second, experiment);
      out.hypothesis = to_json(it->second.value.node);
    } else if (!experiment.def->hypotheses_yaml().empty()) {
      out.hypothesis = shipped_hypotheses(experiment);
    }
  }

  /// An exclude rule that names a value the config does not sweep on that axis (or a variant it does not run)
  /// can never match it: a typo that would silently keep points. Checked for the axes the config writes.
  void check_excludes_match(const SweepConfig& config, const std::string& path) const {
    // Each axis' swept values in a set, built once: an axis and a rule may each hold kMaxRangeValues values and a
    // config hundreds of rules; a search of the list per value took seconds for one such rule (issue 12, found
    // while fuzzing the config path: fuzz/fuzz_config.cpp).
    std::map<std::string, std::set<AxisValue>> swept_sets;
    for (std::size_t r = 0; r < config.excludes.size(); ++r) {
      const ExcludeRule& rule = config.excludes[r];
      for (const auto& [axis, values] : rule.match) {
        const std::vector<AxisValue>* swept = nullptr;
        std::vector<AxisValue> variants;
        if (axis == "variant") {
          if (config.variants.empty()) continue;
          for (const auto& v : config.variants) variants.emplace_back(v);
          swept = &variants;
        } else {
          for (const auto& a : config.axes)
            if (a.name == axis) swept = &a.values;
        }
        if (!swept) continue;  // an axis the config leaves at its default
        const auto [swept_set, made] = swept_sets.try_emplace(axis);
        if (made) swept_set->second.insert(swept->begin(), swept->end());
        for (const auto& v : values)
          if (swept_set->second.count(v) == 0) {
            std::string list;
            for (const auto& w : *swept) list += (list.empty() ? "" : ", ") + to_string(w);
            fail(rule.loc, path + "[" + std::to_string(r) + "]." + axis,
                 to_string(v) + " is not a value the config sweeps on '" + axis + "' (" + list +
                     "): the rule can never match it");
          }
      }
    }
  }

  /// The experiment's own predictions (ExperimentDef::hypotheses, YAML in the `hypothesis:` syntax), for a config
  /// without a `hypothesis` of its own; checked as a config's would be, errors naming the experiment.
  nlohmann::ordered_json shipped_hypotheses(const RegisteredExperiment& experiment) const {
    const SourceLoc where{"experiment " + experiment.name() + " (its shipped hypotheses)", 1, 1};
    YAML::Node node;
    try {
      node = YAML::Load(experiment.def->hypotheses_yaml());
    } catch (const YAML::Exception& e) {
      throw ConfigError(where, "hypothesis", "YAML syntax error: " + e.msg);
    }
    try {
      check_hypothesis(Entry{"hypothesis", "hypothesis", where, Item{node, where}}, experiment);
    } catch (const ConfigError& e) {  // the text is the experiment's, not the config file's
      throw ConfigError(where, e.key(), e.message());
    }
    return to_json(node);
  }

  /// `lab:` overrides given as YAML text "lab:\n  KEY: VALUE\n..." applied on top of `lab`, with the same checks.
  LabSettings parse_lab_overrides(const std::string& text, const LabSettings& lab) const {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw ConfigError({file_, e.mark.is_null() ? 0 : e.mark.line + 1, 0}, "lab", "YAML syntax error: " + e.msg);
    }
    const SourceLoc start{file_, 1, 1};
    // The same rules as the file's: no YAML tags (case H10), bounded aliases.
    std::size_t visited = 0, bytes = 0;
    check_structure(root, "", 0, visited, bytes);
    for (auto& entry : entries(Item{root, loc(root, start)}, ""))
      if (entry.key == "lab") return parse_lab(entry, lab, "from the config");
    return lab;
  }

 private:
  // The hypothesis is evaluated after the run (add_hypotheses, src/report/analysis.cpp); its names and numbers are
  // checked now, so a misspelled variant or axis fails before any GPU time is spent rather than reading
  // "inconclusive" after.
  // Form: a list of {faster: VARIANT, than: VARIANT, when: {AXIS: value or [lo, hi]}, by_at_least: r > 0}.
  void check_hypothesis(const Entry& entry, const RegisteredExperiment& experiment) const {
    static const std::vector<std::string> kKeys = {"faster", "than", "when", "by_at_least"};
    if (!entry.value.node.IsSequence())
      fail(entry.value.loc, entry.path,
           "expected a list of {faster, than, when, by_at_least}, got " + describe(entry.value.node));
    if (entry.value.node.size() > kMaxHypotheses)
      fail(entry.value.loc, entry.path,
           "holds " + std::to_string(entry.value.node.size()) + " claims; at most " + std::to_string(kMaxHypotheses) +
               " (each is judged one by one in the report)");
    std::vector<std::string> variants;
    for (const auto& v : experiment.variants()) variants.push_back(v.name());
    std::size_t i = 0;
    for (const auto& item : elements(entry.value)) {
      const std::string path = entry.path + "[" + std::to_string(i++) + "]";
      if (!item.node.IsMap()) fail(item.loc, path, "expected a map {faster, than, when, by_at_least}");
      bool has_faster = false, has_than = false;
      std::string names[2];  // faster, than
      for (const auto& e : entries(item, path)) {
        if (std::find(kKeys.begin(), kKeys.end(), e.key) == kKeys.end())
          fail(e.key_loc, e.path, "unknown key" + suggest(e.key, kKeys) + " (keys: " + join(kKeys) + ")");
        if (e.key == "faster" || e.key == "than") {
          const std::string name = scalar(e.value, e.path, "a variant name");
          if (std::find(variants.begin(), variants.end(), name) == variants.end())
            fail(e.value.loc, e.path,
                 "no variant '" + name + "'" + suggest(name, variants) + " (variants: " + join(variants) + ")");
          (e.key == "faster" ? has_faster : has_than) = true;
          names[e.key == "faster" ? 0 : 1] = name;
          if (names[0] == names[1])  // case H10: a prediction that can never be tested
            fail(e.value.loc, e.path,
                 "'faster' and 'than' name the same variant (" + name +
                     "): a hypothesis compares two different variants");
        } else if (e.key == "by_at_least") {
          if (real(e.value, e.path, "a ratio > 0") <= 0) fail(e.value.loc, e.path, "expected a ratio > 0");
        } else {
          if (!e.value.node.IsMap()) fail(e.value.loc, e.path, "expected a map of axis: value or [lo, hi]");
          for (const auto& w : entries(e.value, e.path)) {
            const AxisDecl* decl = experiment.find_axis(w.key);
            if (!decl)
              fail(w.key_loc, w.path,
                   "unknown axis" + suggest(w.key, axis_names(experiment)) + " (axes: " + join(axis_names(experiment)) +
                       ")");
            if (w.value.node.IsSequence()) {
              const auto bounds = elements(w.value);
              if (bounds.size() != 2 || decl->kind == AxisKind::Word)
                fail(w.value.loc, w.path, "expected [lo, hi] of a numeric axis");
              for (const auto& b : bounds) (void)axis_value(b, w.path, *decl);
            } else {
              (void)axis_value(w.value, w.path, *decl);
            }
          }
        }
      }
      if (!has_faster || !has_than) fail(item.loc, path, "both 'faster' and 'than' are required");
    }
  }

  const RegisteredExperiment& parse_experiment(const Entry& entry) const {
    const std::string name = scalar(entry.value, entry.path, "the name of an experiment");
    const RegisteredExperiment* experiment = registry_.find(name);
    if (!experiment)
      fail(entry.value.loc, entry.path,
           "no experiment '" + name + "' is registered" + suggest(name, registry_.names()) +
               " (registered: " + join(registry_.names()) + ")");
    return *experiment;
  }

  static std::vector<std::string> axis_names(const RegisteredExperiment& experiment) {
    std::vector<std::string> names;
    for (const auto& axis : experiment.axes) names.push_back(axis.name);
    return names;
  }

  static std::vector<std::string> variant_names(const RegisteredExperiment& experiment) {
    std::vector<std::string> names;
    for (const auto& variant : experiment.variants()) names.push_back(variant.name());
    return names;
  }

  const AxisDecl& find_axis(const RegisteredExperiment& experiment, const Entry& entry) const {
    const AxisDecl* decl = experiment.find_axis(entry.key);
    if (!decl) {
      const auto names = axis_names(experiment);
      fail(entry.key_loc, entry.path,
           "experiment '" + experiment.name() + "' has no axis '" + entry.key + "'" + suggest(entry.key, names) +
               " (axes: " + join(names) + ")");
    }
    return *decl;
  }

  std::vector<AxisSpec> parse_axes(const Entry& axes, const RegisteredExperiment& experiment) const {
    if (!axes.value.node.IsMap())
      fail(axes.value.loc, axes.path, "expected a map of axis names to values, got " + describe(axes.value.node));
    std::vector<AxisSpec> out;
    for (const auto& entry : entries(axes.value, axes.path)) {
      const AxisDecl& decl = find_axis(experiment, entry);
      out.push_back(AxisSpec{decl.name, axis_values(entry.value, entry.path, decl), entry.key_loc});
    }
    return out;
  }

  AxisValue axis_value(const Item& item, const std::string& path, const AxisDecl& decl) const {
    const std::string expected = std::string(to_string(decl.kind)) + " for axis '" + decl.name + "'";
    AxisValue value;
    std::string text;
    switch (decl.kind) {
      case AxisKind::Integer:
        value = integer(item, path, expected);
        text = item.node.Scalar();
        break;
      case AxisKind::Real:
        value = real(item, path, expected);
        text = item.node.Scalar();
        break;
      case AxisKind::Word: {
        text = scalar(item, path, decl.choices.empty() ? "a word" : "one of " + join(decl.choices));
        if (!decl.choices.empty() && std::find(decl.choices.begin(), decl.choices.end(), text) == decl.choices.end())
          fail(item.loc, path,
               "'" + text + "' is not one of " + join(decl.choices) + suggest(text, decl.choices) + " (axis '" +
                   decl.name + "')");
        return text;
      }
    }
    check_bounds(value, text, item.loc, path, decl);
    return value;
  }

  /// Values of one axis (or of one key of an exclude rule): a scalar, a list of scalars, or a range map.
  std::vector<AxisValue> axis_values(const Item& item, const std::string& path, const AxisDecl& decl) const {
    std::vector<AxisValue> values;
    std::vector<SourceLoc> locs;
    if (item.node.IsScalar()) {
      values.push_back(axis_value(item, path, decl));
      locs.push_back(item.loc);
    } else if (item.node.IsSequence()) {
      for (const auto& element : elements(item)) {
        if (!element.node.IsScalar())
          fail(element.loc, path, "expected a single value in the list, got " + describe(element.node));
        values.push_back(axis_value(element, path, decl));
        locs.push_back(element.loc);
      }
      if (values.empty()) fail(item.loc, path, "the list of values is empty");
    } else if (item.node.IsMap()) {
      values = range(item, path, decl);
      locs.assign(values.size(), item.loc);
    } else {
      fail(item.loc, path,
           "expected a value, a list of values or a range " + std::string(kRangeForms) + ", got nothing");
    }
    // Duplicates through an ordered set, not by comparing every pair: a range holds up to kMaxRangeValues
    // values, and the pairwise scan of 100000 took 4 s per axis in a release build (issue 12, found while fuzzing
    // the config path: fuzz/fuzz_config.cpp). The verdict is the same: the first value equal to an earlier one
    // (the values are finite, so equality is the set's equivalence).
    // Case H10: -0.0 is the value 0 (IEEE 754 equality); read as itself it gave the key "density=-0" and a point
    // id other than 0's, so one config point had two names.
    for (AxisValue& v : values)
      if (double* d = std::get_if<double>(&v); d && *d == 0) *d = 0.0;
    std::set<AxisValue> seen;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!seen.insert(values[i]).second) fail(locs[i], path, "value " + to_string(values[i]) + " is given twice");
    return values;
  }

  std::vector<std::string> parse_variants(const Entry& entry, const RegisteredExperiment& experiment) const {
    const auto names = variant_names(experiment);
    std::vector<Item> items;
    if (entry.value.node.IsScalar()) {
      if (entry.value.node.Scalar() == "all") return {};
      items.push_back(entry.value);
    } else if (entry.value.node.IsSequence()) {
      items = elements(entry.value);
      if (items.empty()) fail(entry.value.loc, entry.path, "the list is empty; write 'all' or leave the key out");
    } else {
      fail(entry.value.loc, entry.path, "expected a list of variant names or 'all', got " + describe(entry.value.node));
    }
    std::vector<std::string> out;
    for (const auto& item : items) {
      const std::string name = scalar(item, entry.path, "a variant name");
      if (name == "all" && entry.value.node.IsSequence())
        fail(item.loc, entry.path, "'all' stands alone: write 'variants: all'");
      if (!experiment.find_variant(name))
        fail(item.loc, entry.path,
             "experiment '" + experiment.name() + "' has no variant '" + name + "'" + suggest(name, names) +
                 " (variants: " + join(names) + ")");
      if (std::find(out.begin(), out.end(), name) != out.end())
        fail(item.loc, entry.path, "variant '" + name + "' is given twice");
      out.push_back(name);
    }
    return out;
  }

  std::vector<ExcludeRule> parse_excludes(const Entry& entry, const RegisteredExperiment& experiment) const {
    if (!entry.value.node.IsSequence())
      fail(entry.value.loc, entry.path,
           "expected a list of rules (maps of axis to values), got " + describe(entry.value.node));
    std::vector<ExcludeRule> out;
    std::size_t index = 0;
    for (const auto& rule_item : elements(entry.value)) {
      const std::string rule_path = entry.path + "[" + std::to_string(index++) + "]";
      if (!rule_item.node.IsMap())
        fail(rule_item.loc, rule_path, "expected a rule (a map of axis to values), got " + describe(rule_item.node));
      const auto keys = entries(rule_item, rule_path);
      if (keys.empty()) fail(rule_item.loc, rule_path, "an empty rule would exclude every point");
      ExcludeRule rule;
      rule.loc = rule_item.loc;
      for (const auto& key : keys) {
        if (key.key == "variant") {
          std::vector<AxisValue> values;
          for (auto& name : parse_variants(key, experiment)) values.emplace_back(std::move(name));
          if (values.empty()) fail(key.value.loc, key.path, "'all' would exclude every variant; list names");
          rule.match.emplace_back("variant", std::move(values));
          continue;
        }
        const AxisDecl* decl = experiment.find_axis(key.key);
        if (!decl) {
          auto candidates = axis_names(experiment);
          candidates.push_back("variant");
          fail(key.key_loc, key.path,
               "experiment '" + experiment.name() + "' has no axis '" + key.key + "'" + suggest(key.key, candidates) +
                   " (a rule names axes: " + join(candidates) + ")");
        }
        rule.match.emplace_back(decl->name, axis_values(key.value, key.path, *decl));
      }
      out.push_back(std::move(rule));
    }
    return out;
  }

  /// `unset_label`: what a setting not written here is called in messages ("the default", or, for command-line
  /// overrides on top of a config, "from the config").
  /// `by_backend`: where the sections `host:` and `cuda:` (maps of lab settings on that backend, over the base
  /// ones) go; nullptr: such a section is an unknown setting (a section inside a section).
  LabSettings parse_lab(const Entry& lab_entry, const LabSettings& start = LabSettings{},
                        const std::string& unset_label = "the default",
                        std::map<std::string, LabSettings>* by_backend = nullptr) const {
    if (!lab_entry.value.node.IsMap())
      fail(lab_entry.value.loc, lab_entry.path,
           "expected a map of lab settings, got " + describe(lab_entry.value.node));
    LabSettings lab = start;
    const Entry* min_samples = nullptr;
    std::map<std::string, const Entry*> written;  // the settings this section writes, by key
    const Entry* max_samples = nullptr;
    const auto keys = entries(lab_entry.value, lab_entry.path);

    auto int_at_least = [&](const Entry& e, std::int64_t minimum) {
      const std::string expected = "an integer >= " + std::to_string(minimum);
      const std::int64_t v = integer(e.value, e.path, expected);
      if (v < minimum) fail(e.value.loc, e.path, e.value.node.Scalar() + " is below the minimum; expected " + expected);
      return v;
    };
    auto real_above = [&](const Entry& e, double minimum, bool inclusive) {
      const std::string expected = std::string("a number ") + (inclusive ? ">= " : "> ") + bound_text(minimum);
      const double v = real(e.value, e.path, expected);
      if (inclusive ? v < minimum : v <= minimum)
        fail(e.value.loc, e.path, e.value.node.Scalar() + " is out of range; expected " + expected);
      return v;
    };

    auto word_of = [&](const Entry& e, const std::vector<std::string>& words) {
      const std::string w = scalar(e.value, e.path, "one of " + join(words));
      if (std::find(words.begin(), words.end(), w) == words.end())
        fail(e.value.loc, e.path, "'" + w + "' is not one of " + join(words) + suggest(w, words));
      return w;
    };

    // One table drives the keys and their checks (src/config/lab_settings.hpp).
    std::vector<const Entry*> sections;
    for (const auto& e : keys) {
      if (by_backend && (e.key == "host" || e.key == "cuda")) {
        sections.push_back(&e);
        continue;
      }
      const LabSettingInfo* row = find_lab_setting(e.key);
      if (!row) {
        const std::vector<std::string> names = lab_setting_names();
        fail(e.key_loc, e.path, "unknown lab setting" + suggest(e.key, names) + " (settings: " + join(names) + ")");
      }
      const LabRule& rule = row->rule;
      LabValue value;
      switch (rule.kind) {
        case LabRule::Kind::Integer: {
          const std::int64_t v = int_at_least(e, static_cast<std::int64_t>(rule.min));
          if (static_cast<double>(v) > rule.max)
            fail(e.value.loc, e.path,
                 std::to_string(v) + " is out of range; expected at most " + bound_text(rule.max) + rule.why_max);
          value = v;
          break;
        }
        case LabRule::Kind::Real: {
          const double v = real_above(e, rule.min, rule.inclusive);
          if (v > rule.max)
            fail(e.value.loc, e.path,
                 e.value.node.Scalar() + " is out of range; expected at most " + bound_text(rule.max) + rule.why_max);
          value = v;
          break;
        }
        case LabRule::Kind::Word: value = word_of(e, rule.words); break;
        case LabRule::Kind::Bool:
          (void)plain_text(e.value, e.path, "true or false", "a boolean");  // a quoted "true" is a string
          value = word_of(e, {"true", "false"}) == "true";
          break;
      }
      row->assign(lab, value);
      if (e.key == "min_samples") min_samples = &e;
      written[e.key] = &e;
      if (e.key == "max_samples") max_samples = &e;
    }
    if (lab.max_samples < lab.min_samples) {
      // Point at whichever of the two the config wrote; the other is a default.
      const Entry& culprit = max_samples ? *max_samples : *min_samples;
      fail(culprit.value.loc, culprit.path,
           "max_samples (" + std::to_string(lab.max_samples) + (max_samples ? "" : ", " + unset_label) +
               ") is below min_samples (" + std::to_string(lab.min_samples) + (min_samples ? "" : ", " + unset_label) +
               ")");
    }
    check_finishes(lab, written);
    for (const Entry* section : sections) (*by_backend)[section->key] = parse_lab(*section, lab, "the base lab's");
    return lab;
  }

  /// Case H09: the least time a point takes, min_samples x min_sample_time_s + warmup_time_s, must stay below
  /// point_timeout_s, or every point would be recorded `timeout`; without a timeout (0), below a day. Blames the first
  /// of those settings the section writes. @throws ConfigError naming the settings, their values and the bound.
  void check_finishes(const LabSettings& lab, const std::map<std::string, const Entry*>& written) const {
    // Without a timeout (0), the bound is point_timeout_s's own upper bound, one day.
    const double limit_s = lab.point_timeout_s > 0 ? lab.point_timeout_s : 86400;
    const double least_s = static_cast<double>(lab.min_samples) * lab.min_sample_time_s + lab.warmup_time_s;
    if (least_s < limit_s) return;
    for (const char* key : {"min_sample_time_s", "min_samples", "warmup_time_s", "point_timeout_s"})
      if (const auto it = written.find(key); it != written.end())
        fail(it->second->value.loc, it->second->path,
             fmt::format("min_samples x min_sample_time_s + warmup_time_s = {} x {} s + {} s = {} s reaches "
                         "{}: every point would {}",
                         lab.min_samples, lab.min_sample_time_s, lab.warmup_time_s, least_s,
                         lab.point_timeout_s > 0 ? fmt::format("point_timeout_s ({} s)", lab.point_timeout_s)
                                                 : std::string("a day (86400 s; point_timeout_s is 0: no limit)"),
                         lab.point_timeout_s > 0 ? "time out before its last sample" : "run for more than a day"));
  }

  const Registry& registry_;
};

}  // namespace

SweepConfig parse_config(const std::string& text, const std::string& path, const Registry& registry) {
  SweepConfig config;
  config.path = path;
  config.text = text;
  config.sha256 = sha256_hex(text);
  Parser(path, registry).parse(text, config);
  return config;
}

LabSettings apply_lab_overrides(const LabSettings& lab, const std::vector<std::string>& assignments,
                                const Registry& registry) {
  if (assignments.empty()) return lab;
  // One YAML line per assignment, after "lab:" on line 1: assignment i is on line i + 1. Keys are plain words
  // and values single YAML scalars, so nothing in an argument can add structure (a comment, another key).
  std::string text = "lab:\n";
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < assignments.size(); ++i) {
    const std::string& a = assignments[i];
    const auto eq = a.find('=');
    const std::string key = eq == std::string::npos ? "" : a.substr(0, eq);
    const SourceLoc where{"--lab", static_cast<int>(i + 1), 0};
    const bool word = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!word)
      throw ConfigError(where, "lab",
                        "expected KEY=VALUE with KEY a lab setting (e.g. --lab processes=5), got '" + a + "'");
    const std::string value = a.substr(eq + 1);
    if (value.find_first_of("#\n\r") != std::string::npos)
      throw ConfigError(where, "lab." + key,
                        "a value on the command line cannot hold '#' or a line break, got '" + value + "'");
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      throw ConfigError(where, "lab." + key, "set twice on the command line (case C01: a key is given once)");
    keys.push_back(key);
    text += "  " + key + ": " + value + "\n";
  }
  try {
    return Parser("--lab", registry).parse_lab_overrides(text, lab);
  } catch (const ConfigError& e) {  // report the argument's position, not the line of the text built above
    throw ConfigError({"--lab", std::max(1, e.loc().line - 1), 0}, e.key(), e.message());
  }
}

}  // namespace labrun
