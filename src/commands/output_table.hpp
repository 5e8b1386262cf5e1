// The one table of every way results leave labrun (the Output interface: src/export/output.hpp). Each row names an
// output, the result it writes (Product) and how to make it; a command takes its outputs from here: the sweep's
// result file and console lines, merge's and import's result files, the report folder's files, diff's and history's
// --format, export's formats. A new format is its Output's file and one row here; --format's names, its --help text
// and its error come from the rows.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "console.hpp"
#include "exporter.hpp"
#include "output.hpp"
#include "point_record.hpp"

namespace labrun {

/// What a command gives the output it makes: only the rows that write records or console lines, and gbench, read it.
struct OutputArgs {
  JsonlWriter* file = nullptr;  ///< Product::records: the result file's writer
  ProgressNumbers progress;     ///< "progress": how its lines are numbered
  bool quiet = false;           ///< "progress": no lines
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();  ///< "summary": the sweep's start
  ExportOptions export_options;                                                      ///< Product::exported ("gbench")
};

/// One row of outputs().
struct OutputRow {
  Product product;
  std::string name;     ///< --format's or export's name ("markdown"), the report file's ("report.md"), or the role
  std::string summary;  ///< one line for --help (export's formats: the tool that reads it); may be empty
  std::function<std::unique_ptr<Output>(const OutputArgs&)> make;
};

/// Every output, grouped by product in the order each command uses them: within a product, the first row is
/// --format's default, and a report folder's rows are in the order its files are made.
const std::vector<OutputRow>& outputs();

/// The rows of `product`, in table order.
std::vector<const OutputRow*> outputs_of(Product product);

/// The row of `product` named `name`, or nullptr; an empty `name` is the product's first row (its default).
const OutputRow* find_output(Product product, const std::string& name);

/// The names of `product`'s rows for a message, "table, markdown or json"; with `mark_default`, as --format's help
/// says them, "table (default), markdown or json".
std::string output_names(Product product, bool mark_default = false);

/// The document of export format `format` for `runs` (Output::runs of its row, made with `options`).
/// @throws std::invalid_argument when no export format is named `format`.
Exported export_runs(const std::string& format, const std::vector<Run>& runs, const ExportOptions& options = {});

}  // namespace labrun
