#include "lab_settings.hpp"

#include "stopping.hpp"

namespace labrun {

namespace {

void assign(std::int64_t& field, const LabValue& v) { field = std::get<std::int64_t>(v); }
void assign(std::uint64_t& field, const LabValue& v) { field = static_cast<std::uint64_t>(std::get<std::int64_t>(v)); }
void assign(double& field, const LabValue& v) { field = std::get<double>(v); }
void assign(std::optional<double>& field, const LabValue& v) { field = std::get<double>(v); }
void assign(std::string& field, const LabValue& v) { field = std::get<std::string>(v); }
void assign(bool& field, const LabValue& v) { field = std::get<bool>(v); }

nlohmann::ordered_json json_of(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nullptr; }
template <class T>
nlohmann::ordered_json json_of(const T& v) {
  return nlohmann::ordered_json(v);
}

}  // namespace

const std::vector<LabSettingInfo>& lab_settings_table() {
  static const std::vector<LabSettingInfo> table = {
#define LABRUN_LAB_ROW(type, name, default_value, rule, description)                                         \
  LabSettingInfo{#name, rule, description, [](LabSettings& lab, const LabValue& v) { assign(lab.name, v); }, \
                 [](const LabSettings& lab) { return json_of(lab.name); }},
      LABRUN_LAB_SETTINGS(LABRUN_LAB_ROW)
#undef LABRUN_LAB_ROW
  };
  return table;
}

const LabSettingInfo* find_lab_setting(const std::string& name) {
  for (const auto& row : lab_settings_table())
    if (name == row.name) return &row;
  return nullptr;
}

std::vector<std::string> lab_setting_names() {
  std::vector<std::string> out;
  for (const auto& row : lab_settings_table()) out.push_back(row.name);
  return out;
}

nlohmann::ordered_json to_json(const LabSettings& lab) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& row : lab_settings_table()) j[row.name] = row.to_json(lab);
  return j;
}

LabSettings profile_settings(LabSettings lab) {
  if (!lab.profile) return lab;
  lab.blocking_kernel = false;
  lab.warmup_iterations = 0;  // the first iteration always runs (warmup's first-run cost)
  lab.warmup_time_s = 0;
  lab.min_samples = lab.max_samples = kProfileIterations;
  lab.max_time_s = 1e9;
  lab.min_sample_time_s = 0;  // a sample is one iteration
  lab.target_rel_ci = 1e9;
  lab.point_timeout_s = 0;
  lab.processes = 1;
  lab.interleave = 1;
  return lab;
}

const std::vector<std::string>& sanitizer_tool_names() {
  static const std::vector<std::string> names{"none", "memcheck", "racecheck", "initcheck", "synccheck"};
  return names;
}

LabSettings sanitize_settings(LabSettings lab) {
  if (lab.sanitize == "none") return lab;
  lab.blocking_kernel = false;
  lab.warmup_iterations = 0;  // the first iteration always runs
  lab.warmup_time_s = 0;
  lab.processes = 1;
  lab.interleave = 1;
  lab.fences = lab.guard_inputs = lab.recheck = lab.audit = false;
  return lab;
}

std::string profile_range_name(const std::string& key) {
  std::string name = key;
  for (char& c : name)
    if (c == '/') c = ':';
  return name;
}

}  // namespace labrun
