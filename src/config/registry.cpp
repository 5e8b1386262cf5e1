#include "registry.hpp"

#include <stdexcept>

#include "lab_axes.hpp"

namespace labrun {

const AxisDecl* RegisteredExperiment::find_axis(const std::string& axis) const {
  for (const auto& a : axes)
    if (a.name == axis) return &a;
  return nullptr;
}

const VariantDef* RegisteredExperiment::find_variant(const std::string& variant) const {
  for (const auto& v : def->variants())
    if (v.name() == variant) return &v;
  return nullptr;
}

const CreateFn* RegisteredExperiment::implementation(const std::string& variant, BackendKind backend) const {
  const auto v = implementations.find(variant);
  if (v == implementations.end()) return nullptr;
  const auto b = v->second.find(backend);
  return b == v->second.end() ? nullptr : &b->second;
}

AxisDecl axis_decl(const ExperimentDef::AxisSpec& a) {
  AxisDecl d;
  d.name = a.name;
  d.description = a.description;
  switch (a.type) {
    case AxisType::integer:
      d.kind = AxisKind::Integer;
      d.min = a.min;
      d.max = a.max;
      d.default_value = static_cast<std::int64_t>(a.default_number);
      break;
    case AxisType::real:
      d.kind = AxisKind::Real;
      d.min = a.min;
      d.max = a.max;
      d.default_value = a.default_number;
      break;
    case AxisType::word:
      d.kind = AxisKind::Word;
      d.choices = a.words;
      d.default_value = a.default_word;
      break;
  }
  return d;
}

RegisteredExperiment& Registry::add(std::shared_ptr<const ExperimentDef> def) {
  const std::string& name = def->name();
  if (find(name)) throw std::logic_error("experiment '" + name + "' registered twice");
  RegisteredExperiment e;
  for (const auto& a : def->axes()) {
    if (is_lab_axis(a.name))
      throw std::logic_error("experiment '" + name + "' declares the lab axis '" + a.name +
                             "' (the lab adds it to every experiment)");
    e.axes.push_back(axis_decl(a));
    if (e.size_axis.empty() && a.type == AxisType::integer) e.size_axis = a.name;
  }
  if (!def->size_axis_name().empty()) e.size_axis = def->size_axis_name();
  for (auto& a : lab_axes()) e.axes.push_back(std::move(a));
  e.def = std::move(def);
  experiments_.push_back(std::move(e));
  return experiments_.back();
}

void Registry::implement(const std::string& experiment, const std::string& variant, BackendKind backend, CreateFn fn) {
  for (auto& e : experiments_) {
    if (e.name() != experiment) continue;
    if (!e.find_variant(variant))
      throw std::logic_error("experiment '" + experiment + "' has no variant '" + variant + "'");
    e.implementations[variant][backend] = std::move(fn);
    return;
  }
  throw std::logic_error("no experiment '" + experiment + "'");
}

void Registry::implement_all(const std::string& experiment, BackendKind backend, CreateFn fn) {
  for (auto& e : experiments_) {
    if (e.name() != experiment) continue;
    for (const auto& v : e.variants()) e.implementations[v.name()][backend] = fn;
    return;
  }
  throw std::logic_error("no experiment '" + experiment + "'");
}

const RegisteredExperiment* Registry::find(const std::string& name) const {
  for (const auto& e : experiments_)
    if (e.name() == name) return &e;
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& e : experiments_) out.push_back(e.name());
  return out;
}

}  // namespace labrun
