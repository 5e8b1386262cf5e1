// The fan-out of a run's records to its outputs (output.hpp).
#include "output.hpp"

namespace labrun {

void FanOut::line(const Json& record) {
  for (Output* s : sinks_) s->line(record);
}

void FanOut::text_line(const std::string& text) {
  for (Output* s : sinks_) s->text_line(text);
}

void FanOut::point(std::size_t, const PointRecord& record) {
  ++points_;
  for (Output* s : sinks_) s->point(points_, record);
}

void FanOut::finish() {
  for (Output* s : sinks_) s->finish();
}

}  // namespace labrun
