// The JSON Lines result file as an Output (JsonlSink, output.hpp), and a run written whole through one.
#include "output.hpp"

namespace labrun {

void JsonlSink::line(const Json& record) { writer_.write(record); }

void JsonlSink::text_line(const std::string& text) { writer_.write_line(text); }

void JsonlSink::point(std::size_t, const PointRecord& record) { writer_.write(to_json(record)); }

void JsonlSink::finish() { writer_.commit(); }

void write_run_file(const std::string& path, const Run& run, bool replace) {
  write_whole(path, replace, [&](JsonlWriter& w) {
    JsonlSink out(w);
    out.line(to_json(run.header));
    for (const Json& seg : run.segments) out.line(seg);
    for (const auto& r : run.points) out.point(0, r);
  });
}

}  // namespace labrun
