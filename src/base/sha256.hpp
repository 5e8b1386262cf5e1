// SHA-256 of a byte string, used to identify the exact config text a record was produced from.
#pragma once

#include <string>

namespace labrun {

/// SHA-256 (FIPS 180-4) of `bytes`, taken as raw octets (no text-mode or encoding conversion).
/// @returns the 32-byte digest as 64 lower-case hexadecimal digits, e.g. sha256_hex("abc") starts "ba7816bf".
std::string sha256_hex(const std::string& bytes);

}  // namespace labrun
