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

/// Current UTC time with milliseconds, "2026-11-29T07:31:02.417Z" (`compact`: "20261129T073102.417Z", for
/// file names, so two sweeps started in the same second get different default outputs).
std::string utc_timestamp(bool compact);

}  // namespace labrun
