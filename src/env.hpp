// The host part of the environment record (labrun build, host, OS, CPU). The device part comes from the
// backend (Backend::environment).
#pragma once

#include <string>
#include <vector>

#include "record.hpp"

namespace labrun {

/// labrun version, git sha and dirty flag, build type, compilers and flags, host name, OS, CPU model, logical
/// CPU count, CUDA_VISIBLE_DEVICES (or null). Reads /proc and uname; never fails (unknown fields are null).
Json host_environment();

/// Current UTC time as "2026-11-29T07:31:02Z" (`compact` = "20261129T073102Z", for file names).
std::string utc_timestamp(bool compact);

}  // namespace labrun
