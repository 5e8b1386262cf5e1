// What labrun/experiment.hpp's ExperimentDef holds, read by the lab (included by labrun/experiment.hpp only, after
// VariantDef and AxisType).
#pragma once

namespace labrun::detail {

/// An experiment's declaration as the lab reads it: its axes, plots, hypotheses, functions and variants.
class ExperimentData {
 public:
  struct AxisSpec {
    std::string name, description;
    AxisType type = AxisType::integer;
    double min = 0, max = 0;         ///< inclusive range of integer and real axes
    std::vector<std::string> words;  ///< allowed values of a word axis
    std::string default_word;
    double default_number = 0;
  };
  /// A plot for the report: time against `x`, one line per `series` value, one panel per `facets` combination.
  struct Plot {
    std::string x, series = "variant";
    std::vector<std::string> facets;
    std::string title;
  };

  explicit ExperimentData(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& docs_path() const { return docs_; }
  const std::vector<AxisSpec>& axes() const { return axes_; }
  const std::string& size_axis_name() const { return size_axis_; }
  const std::vector<Plot>& plots() const { return plots_; }
  const std::string& hypotheses_yaml() const { return hypotheses_; }
  const std::function<void(const Args&, Layout&)>& arrays_fn() const { return arrays_; }
  const std::vector<std::string>& input_axes() const { return input_axes_; }
  const std::vector<std::string>& reference_axes() const { return ref_axes_; }
  const std::function<std::string(const Args&)>& seed_text_fn() const { return seed_text_; }
  const std::function<void(const Args&, std::uint64_t, Arrays&)>& generate_fn() const { return generate_; }
  const std::function<void(const Args&, const Arrays&, Reference&)>& reference_fn() const { return reference_; }
  const std::function<void(Compare&)>& check_fn() const { return check_; }
  const std::function<Cost(const Args&, const Reference&)>& cost_fn() const { return cost_; }
  const std::vector<VariantDef>& variants() const { return variants_; }
  const std::function<void(const ReportView&, std::ostream&)>& report_fn() const { return report_; }

 protected:
  std::string name_, description_, docs_, size_axis_, hypotheses_;
  std::vector<AxisSpec> axes_;
  std::vector<Plot> plots_;
  std::function<void(const Args&, Layout&)> arrays_;
  std::vector<std::string> input_axes_, ref_axes_;
  std::function<std::string(const Args&)> seed_text_;
  std::function<void(const Args&, std::uint64_t, Arrays&)> generate_;
  std::function<void(const Args&, const Arrays&, Reference&)> reference_;
  std::function<void(Compare&)> check_;
  std::function<Cost(const Args&, const Reference&)> cost_;
  std::vector<VariantDef> variants_;
  std::function<void(const ReportView&, std::ostream&)> report_;
};

}  // namespace labrun::detail
