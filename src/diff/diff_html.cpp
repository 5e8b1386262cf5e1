// labrun diff's HTML view (`--format html`, docs/html.md): the diff's JSON (to_json(DiffResult)) in a page whose view
// script draws a forest plot of every compared point's ratio with its interval and the minimum-effect band.
#include <ostream>

#include "diff.hpp"
#include "html_page.hpp"
#include "output.hpp"

namespace labrun {
namespace {

class DiffHtml final : public Output {
 public:
  void diff(const DiffResult& result, std::ostream& out) override {
    const HtmlAssets assets = html_assets();
    write_html_page(out, "labrun diff", assets, [&](std::ostream& data) {
      data << "{\"kind\":\"diff\",\"title\":\"labrun diff\",\"diff\":" << html_json(to_json(result)) << "}";
    });
  }
};

}  // namespace

std::unique_ptr<Output> make_diff_html_output() { return std::make_unique<DiffHtml>(); }

}  // namespace labrun
