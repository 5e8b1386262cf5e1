#include "code_rev.hpp"

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "build_info.hpp"

namespace labrun {

namespace {

// Function-local statics: set_built_code_rev() runs during static initialization of another translation unit,
// before any namespace-scope object of this one is guaranteed to exist.
std::optional<CodeRev>& built_slot() {
  static std::optional<CodeRev> slot;
  return slot;
}

std::string& option_slot() {
  static std::string text;
  return text;
}

bool is_hex(const std::string& s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

}  // namespace

void set_built_code_rev(const char* project, const char* git_sha, bool git_dirty) {
  built_slot() = CodeRev{project ? project : "", git_sha && *git_sha ? git_sha : "unknown", git_dirty, "build"};
}

CodeRev built_code_rev() {
  if (built_slot()) return *built_slot();
  const BuildInfo& b = build_info();
  return CodeRev{"labrun", b.git_sha, b.git_dirty, "default"};
}

CodeRev parse_code_rev(const std::string& text, const std::string& project, const std::string& source) {
  std::string sha = text;
  bool dirty = false;
  static const std::string kDirty = "+dirty";
  if (sha.size() > kDirty.size() && sha.compare(sha.size() - kDirty.size(), kDirty.size(), kDirty) == 0) {
    sha.resize(sha.size() - kDirty.size());
    dirty = true;
  }
  const bool ok = sha == "unknown" || (sha.size() >= 7 && sha.size() <= 40 && is_hex(sha));
  if (!ok)
    throw std::invalid_argument(source +
                                ": expected SHA[+dirty] (SHA: 7 to 40 hex digits of the commit under test, "
                                "or unknown), got '" +
                                text + "'");
  for (char& c : sha)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return CodeRev{project, sha, dirty, source};
}

CodeRev resolve_code_rev(const CodeRev& built, const std::optional<std::string>& option, const char* env) {
  if (option && !option->empty()) return parse_code_rev(*option, built.project, "--code-rev");
  if (env != nullptr && *env != '\0') return parse_code_rev(env, built.project, "LABRUN_CODE_REV");
  return built;
}

void set_code_rev_option(const std::string& text) {
  if (!text.empty()) parse_code_rev(text, "", "--code-rev");
  option_slot() = text;
}

const std::string& code_rev_option() { return option_slot(); }

CodeRev code_rev() {
  const std::string& option = option_slot();
  return resolve_code_rev(built_code_rev(), option.empty() ? std::nullopt : std::optional(option),
                          std::getenv("LABRUN_CODE_REV"));
}

Json to_json(const CodeRev& rev) {
  return Json{{"project", rev.project}, {"git_sha", rev.git_sha}, {"git_dirty", rev.git_dirty}, {"source", rev.source}};
}

std::string describe(const CodeRev& rev) {
  return rev.project + " " + rev.git_sha.substr(0, 12) + (rev.git_dirty ? " (dirty)" : "");
}

}  // namespace labrun
