// labrun's HTML pages (html_page.hpp).
#include "html_page.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include "spawn.hpp"

namespace labrun {
namespace {

std::string read_text(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return in ? s.str() : "";
}

/// Text for inside a <script> element: "</script" (any case) written as "<\/script", which JavaScript reads the same
/// inside a string or regular expression, the only places it can stand; so nothing closes the element early.
std::string script_safe(const std::string& js) {
  std::string out;
  out.reserve(js.size());
  for (std::size_t i = 0; i < js.size(); ++i) {
    out += js[i];
    if (js[i] == '<' && i + 7 < js.size() && js[i + 1] == '/') {
      std::string word = js.substr(i + 2, 6);
      for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (word == "script") out += '\\';
    }
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// The page's style: readable tables, charts at full width, the legend beside the data (set in the view script).
constexpr const char* kStyle =
    R"(body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.chart{position:relative;width:100%}.filters{margin:.4em 0}.filters label{margin-right:1em}
.warn{color:#a33}.clickable{cursor:pointer}.clickable:hover{background:#eef}.map td{text-align:center;min-width:5em}
.detail{background:#fafafa;border:1px solid #ddd;padding:.5em 1em;margin-top:1em}dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}
dt{font-weight:600}dd{margin:0})";

}  // namespace

HtmlAssets html_assets() {
  HtmlAssets a;
  a.view_js_path = find_script("", "labrun_view.js");
  a.chart_js_path = find_script("", "chart.min.js");
  std::error_code ec;
  if (a.chart_js_path.empty() && std::filesystem::exists("/usr/share/javascript/chart.js/chart.min.js", ec))
    a.chart_js_path = "/usr/share/javascript/chart.js/chart.min.js";
  a.view_js = read_text(a.view_js_path);
  a.chart_js = read_text(a.chart_js_path);
  return a;
}

std::string html_json(const Json& value) {
  const std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string html_assets_warning(const std::string& command, const HtmlAssets& assets) {
  std::string w;
  if (assets.chart_js.empty())
    w += "labrun " + command +
         ": warning: the charting library chart.min.js was not found (Debian: libjs-chart.js); index.html shows "
         "its tables without charts\n";
  if (assets.view_js.empty())
    w += "labrun " + command + ": warning: scripts/labrun_view.js was not found; index.html holds its data only\n";
  return w;
}

void write_html_page(std::ostream& out, const std::string& title, const HtmlAssets& assets,
                     const std::function<void(std::ostream&)>& write_data) {
  out << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
         "style-src 'unsafe-inline'; img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
      << "<main id=\"labrun\"></main>\n";
  if (assets.view_js.empty())
    out << "<p>labrun's view script (labrun_view.js) was not found when this page was written: the data is in the "
           "script element labrun-data.</p>\n";
  out << "<script id=\"labrun-data\" type=\"application/json\">";
  write_data(out);
  out << "</script>\n";
  if (!assets.chart_js.empty()) out << "<script>" << script_safe(assets.chart_js) << "</script>\n";
  if (!assets.view_js.empty()) out << "<script>" << script_safe(assets.view_js) << "</script>\n";
  out << "</body>\n</html>\n";
}

}  // namespace labrun
