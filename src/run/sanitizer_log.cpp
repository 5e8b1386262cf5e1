#include "sanitizer_log.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace labrun {

namespace {

constexpr const char* kPrefix = "=========";

// The lines of the tool's own blocks: its prefix, then the text (one space after the prefix dropped).
std::vector<std::string> tool_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  const std::size_t n = std::char_traits<char>::length(kPrefix);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.compare(0, n, kPrefix) != 0) continue;
    std::string rest = line.substr(n);
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    lines.push_back(std::move(rest));
  }
  return lines;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Banner and summary lines: not a finding.
bool is_summary(const std::string& line) {
  for (const char* p : {"COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                        "Target application returned an error", "No fatal errors"})
    if (starts_with(line, p)) return true;
  return false;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The kernel a line names: the text between "at " and "+0x" (the tool's "at kernel(args)+0x90 in file:line").
std::optional<std::string> kernel_in(const std::string& line) {
  static const std::regex at(R"((?:^|\s)at (.+?)\+0x[0-9a-fA-F]+)");
  std::smatch m;
  if (std::regex_search(line, m, at)) return trimmed(m[1].str());
  return std::nullopt;
}

std::optional<std::uint64_t> address_in(const std::string& line) {
  static const std::regex address(R"((?:Address|Access to) (0x[0-9a-fA-F]+))");
  std::smatch m;
  if (!std::regex_search(line, m, address)) return std::nullopt;
  return std::strtoull(m[1].str().c_str(), nullptr, 16);
}

std::optional<std::int64_t> count_after(const std::string& line, const std::regex& pattern) {
  std::smatch m;
  if (!std::regex_search(line, m, pattern)) return std::nullopt;
  return std::strtoll(m[1].str().c_str(), nullptr, 10);
}

std::string bytes_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

}  // namespace

SanitizerLog parse_sanitizer_log(const std::string& text) {
  static const std::regex error_summary(R"(^ERROR SUMMARY: (\d+) error)");
  static const std::regex race_summary(R"(^RACECHECK SUMMARY: .*\((\d+) error)");
  SanitizerLog log;
  bool in_block = false, in_backtrace = false;
  const auto count = [&](std::optional<std::int64_t> n) {
    if (n) log.errors = std::max(log.errors.value_or(0), *n);
  };
  for (const std::string& line : tool_lines(text)) {
    if (trimmed(line).empty()) {
      in_block = false;
      continue;
    }
    const bool indented = line[0] == ' ' || line[0] == '\t';
    if (!indented) {
      in_block = false;
      if (is_summary(line)) {
        count(count_after(line, error_summary));
        count(count_after(line, race_summary));
        continue;
      }
      if (static_cast<std::int64_t>(log.findings.size()) >= kMaxSanitizerFindings) continue;
      SanitizerFinding f;
      f.kind = line;
      if (auto k = kernel_in(line)) f.kernel = *k;
      log.findings.push_back(std::move(f));
      log.addresses.push_back(address_in(line));
      in_block = true;
      in_backtrace = false;
      continue;
    }
    if (!in_block) continue;
    const std::string item = trimmed(line);
    // The host and device backtraces: frames of labrun and the driver, not the kernel's fault.
    if (starts_with(item, "Saved host backtrace") || starts_with(item, "Device Frame")) in_backtrace = true;
    if (in_backtrace || starts_with(item, "Host Frame")) continue;
    SanitizerFinding& f = log.findings.back();
    if (f.kernel.empty())
      if (auto k = kernel_in(item)) f.kernel = *k;
    if (!log.addresses.back()) log.addresses.back() = address_in(item);
    if (f.detail.size() < 600) f.detail += (f.detail.empty() ? "" : "; ") + item;
  }
  return log;
}

std::optional<std::string> locate_address(std::uint64_t address, const std::vector<SanitizerArray>& arrays,
                                          std::uint64_t reach_bytes) {
  const SanitizerArray* best = nullptr;
  std::uint64_t best_distance = reach_bytes + 1, best_begin = 0;
  for (const SanitizerArray& a : arrays) {
    char* end = nullptr;
    const std::uint64_t begin = std::strtoull(a.address.c_str(), &end, 16);
    if (end == a.address.c_str() || *end != '\0' || a.bytes < 0) continue;
    const std::uint64_t last = begin + static_cast<std::uint64_t>(a.bytes);  // one past the end
    const std::uint64_t distance = address < begin ? begin - address : address < last ? 0 : address - last + 1;
    if (distance < best_distance) {
      best = &a;
      best_distance = distance;
      best_begin = begin;
    }
  }
  if (!best) return std::nullopt;
  if (address < best_begin) return best->name + " - " + bytes_text(best_begin - address) + " (before its start)";
  const std::uint64_t offset = address - best_begin;
  if (best_distance == 0) return best->name + " + " + bytes_text(offset);
  return best->name + " + " + bytes_text(offset) + " (past its end: " + best->name + " holds " +
         bytes_text(static_cast<std::uint64_t>(best->bytes)) + ")";
}

void add_sanitizer_log(SanitizerReport& report, const SanitizerLog& log) {
  report.errors = log.errors.value_or(static_cast<std::int64_t>(log.findings.size()));
  report.findings = log.findings;
  for (std::size_t i = 0; i < report.findings.size(); ++i)
    if (i < log.addresses.size() && log.addresses[i])
      report.findings[i].array = locate_address(*log.addresses[i], report.arrays);
}

std::string sanitizer_failure_reason(const SanitizerReport& report) {
  std::string reason = "compute-sanitizer " + report.tool + ": " + std::to_string(report.errors) +
                       (report.errors == 1 ? " error" : " errors");
  const auto first = std::find_if(report.findings.begin(), report.findings.end(),
                                  [](const SanitizerFinding& f) { return !starts_with(f.kind, "Warning"); });
  if (first == report.findings.end()) return reason;
  reason += ": " + first->kind;
  if (!first->kernel.empty() && first->kind.find(first->kernel) == std::string::npos) reason += " in " + first->kernel;
  if (first->array) reason += " at " + *first->array;
  return reason;
}

}  // namespace labrun
