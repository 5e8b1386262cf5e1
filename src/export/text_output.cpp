// The Output of a format that is one text (text_output.hpp).
#include "text_output.hpp"

#include <ostream>

namespace labrun {

namespace {

using DiffText = std::string (*)(const DiffResult&);
using HistoryText = std::string (*)(const HistoryResult&);

/// Writes a diff with `diff_text` and a history with `history_text`; a null one writes nothing (Output's default).
class TextOutput final : public Output {
 public:
  TextOutput(DiffText diff_text, HistoryText history_text) : diff_text_(diff_text), history_text_(history_text) {}
  void diff(const DiffResult& result, std::ostream& out) override {
    if (diff_text_) out << diff_text_(result);
  }
  void history(const HistoryResult& result, std::ostream& out) override {
    if (history_text_) out << history_text_(result);
  }

 private:
  DiffText diff_text_;
  HistoryText history_text_;
};

}  // namespace

std::unique_ptr<Output> diff_text_output(DiffText text) { return std::make_unique<TextOutput>(text, nullptr); }

std::unique_ptr<Output> history_text_output(HistoryText text) { return std::make_unique<TextOutput>(nullptr, text); }

}  // namespace labrun
