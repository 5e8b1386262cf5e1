// The table of every output (output_table.hpp).
#include "output_table.hpp"

#include <stdexcept>

#include "diff.hpp"
#include "history.hpp"
#include "report_files.hpp"

namespace labrun {

namespace {

/// A row whose output takes no arguments.
template <class Make>
std::function<std::unique_ptr<Output>(const OutputArgs&)> plain(Make make) {
  return [make](const OutputArgs&) { return make(); };
}

}  // namespace

const std::vector<OutputRow>& outputs() {
  static const std::vector<OutputRow> table{
      // A run's records as they are made, and on the console.
      {Product::records, "jsonl", "JSON Lines result file (docs/records.md)",
       [](const OutputArgs& a) -> std::unique_ptr<Output> { return std::make_unique<JsonlSink>(*a.file); }},
      {Product::console, "progress", "a line per point as it finishes",
       [](const OutputArgs& a) -> std::unique_ptr<Output> {
         return std::make_unique<ProgressSink>(a.progress, a.quiet);
       }},
      {Product::console, "summary", "the sweep's table at its end",
       [](const OutputArgs& a) -> std::unique_ptr<Output> { return std::make_unique<SummarySink>(a.started); }},
      // A report folder, in the order its files are made.
      {Product::report, "points.csv", "", plain(make_points_csv_output)},
      {Product::report, "ceilings.json", "", plain(make_ceilings_json_output)},
      {Product::report, "plots.json", "", plain(make_plot_specs_output)},
      {Product::report, "*.png", "", plain(make_plots_output)},
      {Product::report, "report.md", "", plain(make_report_md_output)},
      {Product::report, "index.html", "", plain(make_report_html_output)},
      // diff --format, the default first.
      {Product::diff, "table", "", plain(make_diff_table_output)},
      {Product::diff, "markdown", "", plain(make_diff_markdown_output)},
      {Product::diff, "json", "", plain(make_diff_json_output)},
      {Product::diff, "html", "", plain(make_diff_html_output)},
      // history --format, the default first.
      {Product::history, "table", "", plain(make_history_table_output)},
      {Product::history, "markdown", "", plain(make_history_markdown_output)},
      {Product::history, "json", "", plain(make_history_json_output)},
      // labrun export FORMAT.
      {Product::exported, "gbench",
       "Google Benchmark JSON (compare.py, github-action-benchmark tool 'googlecpp', Bencher cpp_google)",
       [](const OutputArgs& a) { return make_gbench_output(a.export_options); }},
      {Product::exported, "bmf", "Bencher Metric Format (bencher run --adapter json)", plain(make_bmf_output)},
      {Product::exported, "github-action-benchmark",
       "github-action-benchmark's customSmallerIsBetter (tool: 'customSmallerIsBetter')",
       plain(make_github_action_output)},
  };
  return table;
}

std::vector<const OutputRow*> outputs_of(Product product) {
  std::vector<const OutputRow*> rows;
  for (const OutputRow& row : outputs())
    if (row.product == product) rows.push_back(&row);
  return rows;
}

const OutputRow* find_output(Product product, const std::string& name) {
  for (const OutputRow* row : outputs_of(product))
    if (name.empty() || row->name == name) return row;
  return nullptr;
}

std::string output_names(Product product, bool mark_default) {
  const std::vector<const OutputRow*> rows = outputs_of(product);
  std::string text;
  for (std::size_t i = 0; i < rows.size(); ++i)
    text += (i == 0                 ? ""
             : i + 1 == rows.size() ? " or "
                                    : ", ") +
            rows[i]->name + (i == 0 && mark_default ? " (default)" : "");
  return text;
}

Exported export_runs(const std::string& format, const std::vector<Run>& runs, const ExportOptions& options) {
  const OutputRow* row = find_output(Product::exported, format);
  if (!row || format.empty()) throw std::invalid_argument("no export format is named '" + format + "'");
  OutputArgs args;
  args.export_options = options;
  Exported out;
  row->make(args)->runs(runs, out);
  return out;
}

}  // namespace labrun
