// The fan-out of a sweep's records and the result-file sink (record_sink.hpp).
#include "record_sink.hpp"

namespace labrun {

void FanOut::line(const Json& record) {
  for (RecordSink* s : sinks_) s->line(record);
}

void FanOut::point(std::size_t, const PointRecord& record) {
  ++points_;
  for (RecordSink* s : sinks_) s->point(points_, record);
}

void FanOut::finish() {
  for (RecordSink* s : sinks_) s->finish();
}

void JsonlSink::line(const Json& record) { writer_.write(record); }

void JsonlSink::point(std::size_t, const PointRecord& record) { writer_.write(to_json(record)); }

void JsonlSink::finish() { writer_.commit(); }

}  // namespace labrun
