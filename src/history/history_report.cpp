// The report folder of `labrun history -o DIR` (write_history_report, history.hpp): history.json, the plots drawn by
// scripts/plot_history.py, index.html (the HTML view, docs/html.md) and history.md.
#include "history.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history.hpp"
#include "format.hpp"
#include "html_page.hpp"
#include "output_file.hpp"
#include "spawn.hpp"

namespace labrun {
namespace {
namespace fs = std::filesystem;
}  // namespace

void write_history_report(const HistoryResult& h, const std::string& dir, const std::string& script_given,
                          std::size_t max_plots, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "plots", ec);
  if (ec) throw OutputError("cannot create " + dir + "/plots: " + ec.message());
  const fs::path data = fs::path(dir) / "history.json";
  {
    Json j = to_json(h, true);
    j["max_plots"] = max_plots;
    std::ofstream f = open_for_write(data);
    f << j.dump(1) << "\n";
    close_or_throw(f, data);
  }
  std::vector<std::string> plots(h.groups.size());
  if (!h.groups.empty()) {
    const std::string script = find_script(script_given, "plot_history.py");
    std::string python;
    if (script.empty()) {
      err << "labrun history: warning: scripts/plot_history.py not found; no plots\n";
    } else {
      python = python_with_matplotlib();
      if (python.empty())
        err << "labrun history: warning: python3 with matplotlib not available (Debian: python3-matplotlib); no "
               "plots\n";
    }
    if (!python.empty()) {
      SpawnOptions logged;
      const fs::path log = fs::path(dir) / "plot.log";
      logged.output = log.string();
      const int rc = run_process({python, script, dir}, logged);
      if (rc != 0) {
        err << "labrun history: warning: plotting failed (exit status " << rc << "); see " << log.string() << "\n";
      } else {
        fs::remove(log, ec);
        for (std::size_t i = 0; i < h.groups.size(); ++i) {
          const std::string name = fmt::format("plots/group_{}.png", i + 1);
          if (fs::exists(fs::path(dir) / name, ec)) plots[i] = name;
        }
      }
    }
  }
  const fs::path html = fs::path(dir) / "index.html";
  {
    const HtmlAssets assets = html_assets();
    err << html_assets_warning("history", assets);
    std::ofstream f = open_for_write(html);
    write_html_page(f, "labrun history", assets, [&](std::ostream& out) {
      out << "{\"kind\":\"history\",\"title\":\"labrun history\",\"history\":" << html_json(to_json(h, true)) << "}";
    });
    close_or_throw(f, html);
  }
  const fs::path md = fs::path(dir) / "history.md";
  std::ofstream f = open_for_write(md);
  f << history_markdown(h, plots);
  if (std::none_of(plots.begin(), plots.end(), [](const std::string& p) { return !p.empty(); }) && !h.groups.empty())
    f << "\nNo plots were drawn (python3 with matplotlib was not available, or plotting failed).\n";
  close_or_throw(f, md);
}

}  // namespace labrun
