#include "registry.hpp"

#include <stdexcept>

#include "lab_axes.hpp"

namespace labrun {

const char* to_string(BackendKind kind) { return kind == BackendKind::host ? "host" : "cuda"; }

const AxisDecl* Experiment::find_axis(const std::string& axis) const {
  for (const auto& a : axes)
    if (a.name == axis) return &a;
  return nullptr;
}

const VariantDecl* Experiment::find_variant(const std::string& variant) const {
  for (const auto& v : variants)
    if (v.name == variant) return &v;
  return nullptr;
}

VariantDecl* Experiment::find_variant(const std::string& variant) {
  for (auto& v : variants)
    if (v.name == variant) return &v;
  return nullptr;
}

Experiment& Registry::add(Experiment experiment) {
  if (find(experiment.name)) throw std::logic_error("experiment '" + experiment.name + "' registered twice");
  for (const auto& a : experiment.axes)
    if (is_lab_axis(a.name))
      throw std::logic_error("experiment '" + experiment.name + "' declares the lab axis '" + a.name +
                             "' (the lab adds it to every experiment)");
  for (auto& a : lab_axes()) experiment.axes.push_back(std::move(a));
  experiments_.push_back(std::move(experiment));
  return experiments_.back();
}

void Registry::implement(const std::string& experiment, const std::string& variant, BackendKind backend,
                         CreateFn fn) {
  for (auto& e : experiments_) {
    if (e.name != experiment) continue;
    VariantDecl* v = e.find_variant(variant);
    if (!v) throw std::logic_error("experiment '" + experiment + "' has no variant '" + variant + "'");
    v->implementations[backend] = std::move(fn);
    return;
  }
  throw std::logic_error("no experiment '" + experiment + "'");
}

void Registry::implement_all(const std::string& experiment, BackendKind backend, CreateFn fn) {
  for (auto& e : experiments_) {
    if (e.name != experiment) continue;
    for (auto& v : e.variants) v.implementations[backend] = fn;
    return;
  }
  throw std::logic_error("no experiment '" + experiment + "'");
}

const Experiment* Registry::find(const std::string& name) const {
  for (const auto& e : experiments_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& e : experiments_) out.push_back(e.name);
  return out;
}

}  // namespace labrun
