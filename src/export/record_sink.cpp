// The fan-out of a sweep's records and the result-file sink (record_sink.hpp).
#include "record_sink.hpp"

namespace labrun {

void FanOut::line(const Json& record) {
  for (RecordSink* s : sinks_) s->line(record);
}

void FanOut::text_line(const std::string& text) {
  for (RecordSink* s : sinks_) s->text_line(text);
}

void FanOut::point(std::size_t, const PointRecord& record) {
  ++points_;
  for (RecordSink* s : sinks_) s->point(points_, record);
}

void FanOut::finish() {
  for (RecordSink* s : sinks_) s->finish();
}

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
