// labrun's HTML views as files: one self-contained page per view (the report's index.html, the history's index.html,
// the diff's --format html), holding the charting library (Chart.js from Debian's libjs-chart.js, found at run time:
// html_assets()), labrun's view script (scripts/labrun_view.js) and the view's data as JSON. The page opens from disk
// and asks for nothing over the network: its Content-Security-Policy allows no request. docs/html.md describes the
// views and why Chart.js.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "record.hpp"

namespace labrun {

/// The two scripts a page inlines, as text; empty where it was not found.
struct HtmlAssets {
  std::string chart_js;       ///< Chart.js (chart.min.js, UMD build)
  std::string view_js;        ///< scripts/labrun_view.js
  std::string chart_js_path;  ///< where chart_js was read from ("" when not found)
  std::string view_js_path;   ///< where view_js was read from ("" when not found)
};

/// Finds and reads the page's scripts: labrun_view.js as find_script() finds labrun's helper scripts (./scripts, the
/// scripts/ folder above the running binary, <prefix>/share/labrun/ of an install); chart.min.js the same way, then at
/// the Debian package's path (/usr/share/javascript/chart.js/chart.min.js, libjs-chart.js). Never throws: a missing
/// script is an empty string (the page then says which is missing and shows its tables without charts).
HtmlAssets html_assets();

/// `value` as JSON text that can stand inside a <script> element: every '<' written as \u003c (JSON text has '<'
/// only inside strings, where the escape means the same), so no record text can close the element.
std::string html_json(const Json& value);

/// Writes a whole page to `out`: `title` (HTML-escaped), the inlined `assets`, and the data, which `write_data` writes
/// as one JSON value (each piece through html_json()). The view script reads the value's "kind" ("report", "diff",
/// "history") and draws that view. Throws what `write_data` and the stream throw.
void write_html_page(std::ostream& out, const std::string& title, const HtmlAssets& assets,
                     const std::function<void(std::ostream&)>& write_data);

/// A warning line for `command`'s stderr when a script is missing ("" when both were found), naming the package.
std::string html_assets_warning(const std::string& command, const HtmlAssets& assets);

}  // namespace labrun
