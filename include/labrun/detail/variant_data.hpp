// What labrun/experiment.hpp's VariantDef holds, read by the lab (included by labrun/experiment.hpp only, after
// Args, Launch, Step and Setup).
#pragma once

namespace labrun::detail {

/// A Step or a Setup as a Setup (VariantDef::host, CudaDef::cuda).
template <class F>
Setup to_setup(F f) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&, Launch&>>) {
    return [f](Launch&) -> Step { return f; };
  } else {
    return Setup(std::move(f));
  }
}

/// A variant's declaration as the lab reads it.
class VariantData {
 public:
  VariantData(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const Setup& host_setup() const { return host_; }
  const std::vector<std::string>& modes() const { return modes_; }
  const std::function<std::optional<std::string>(const Args&)>& unsupported_fn() const { return unsupported_; }

 protected:
  std::string name_, description_;
  Setup host_;
  std::vector<std::string> modes_ = {"eager", "graph"};
  std::function<std::optional<std::string>(const Args&)> unsupported_;
};

}  // namespace labrun::detail
