#include <labrun/status.hpp>

#include "name_table.hpp"

namespace labrun {

namespace {

// A status's row: its spelling in records and whether it makes a sweep exit 1 (is_failure).
struct StatusRow {
  Status value;
  const char* name;
  bool failure;
};

// The one place a status is spelled, in enum order.
constexpr StatusRow kStatusNames[] = {
    {Status::ok, "ok", false},
    {Status::incorrect, "incorrect", true},
    {Status::skipped, "skipped", false},
    {Status::not_supported, "not_supported", false},
    {Status::capture_unsupported, "capture_unsupported", false},
    {Status::error, "error", true},
    {Status::device_fault, "device_fault", true},
    {Status::crashed, "crashed", true},
    {Status::timeout, "timeout", true},
    {Status::escaped, "escaped", true},
    {Status::sanitized, "sanitized", false},
};

}  // namespace

const char* to_string(Status status) { return name_in(kStatusNames, status); }

bool is_failure(Status status) {
  const StatusRow* row = row_in(kStatusNames, status);
  return row && row->failure;
}

std::optional<Status> parse_status(std::string_view name) { return parse_in(kStatusNames, name); }

std::string status_names() { return names_in(kStatusNames); }

}  // namespace labrun
