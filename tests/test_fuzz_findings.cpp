// Regression tests of what the fuzzers (fuzz/fuzz_config.cpp, fuzz/fuzz_results.cpp; scripts/sanitize.sh) found.
// Each input is also in the seed corpus (fuzz/corpus/<target>/finding-*), so the fuzzers start from it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::TempDir;

std::string seed(const std::string& name) {
  std::ifstream in(std::string(LABRUN_SOURCE_DIR) + "/fuzz/corpus/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("no seed " + name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// fuzz_results: a number beyond the range of a double is valid JSON grammar but not a double; nlohmann throws
// out_of_range 406, not the parse_error the record layer documented. The loader reports it as bad JSON with the
// file and line (every caller catches std::exception); parse_record_line now documents the exception.
TEST(FuzzFindings, NumberBeyondADoubleIsBadJsonNamingTheLine) {
  try {
    (void)parse_record_line("{\"time_s\":2e308}");
    FAIL() << "2e308 parsed";
  } catch (const Json::out_of_range& e) {
    EXPECT_STREQ(e.what(), "[json.exception.out_of_range.406] number overflow parsing '2e308'");
  }
  TempDir dir;
  const std::string path = dir.file("overflow.jsonl");
  std::ofstream(path, std::ios::binary) << seed("results/finding-number-overflow.jsonl");
  try {
    (void)load_results({path});
    FAIL() << "load_results accepted 2e308";
  } catch (const ResultError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: not JSON: [json.exception.out_of_range.406] number overflow parsing '2e308'");
  }
}

}  // namespace
}  // namespace labrun
