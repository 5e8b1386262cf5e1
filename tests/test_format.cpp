// The text helpers of format.hpp: significant figures and SI prefixes, times, rates, bytes, percentages, counts,
// numbers for axis values, axis values beyond 2^53 (case C14) and axes lists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "format.hpp"

namespace labrun {
namespace {

TEST(Format, NumbersAndUnits) {
  EXPECT_EQ(format_number(1e8), "1e8");
  EXPECT_EQ(format_number(1600000), "1.6e6");
  EXPECT_EQ(format_number(1024), "1024");
  EXPECT_EQ(format_number(0.04), "0.04");
  EXPECT_EQ(format_number(3.2e7 + 0.5), "3.2e7");
  EXPECT_EQ(format_rate(4.37e12, "B/s"), "4.37 TB/s");
  EXPECT_EQ(format_time(114.3e-6), "114 µs");
  EXPECT_EQ(display_width(format_time(114.3e-6)), 6u);  // µ: two bytes, one column
  EXPECT_EQ(display_width("2.99 ms"), 7u);
  EXPECT_EQ(format_percent(0.987), "99%");
  EXPECT_EQ(format_percent(std::nan("")), "n/a");
  // C14: an axis value beyond 2^53 is printed exactly, not through a double.
  EXPECT_EQ(format_axis_value(Json(std::int64_t{9007199254740993})), "9007199254740993");
  EXPECT_EQ(format_axis_value(Json(std::uint64_t{18446744073709551615u})), "18446744073709551615");
  EXPECT_EQ(format_axis_value(Json(std::int64_t{100000000})), "1e8");
}

TEST(Format, SignificantFiguresAndPrefixes) {
  EXPECT_EQ(format_sig3(114.3), "114");
  EXPECT_EQ(format_sig3(2.994), "2.99");
  EXPECT_EQ(format_sig3(10.04), "10.0");
  EXPECT_EQ(format_sig3(99.96), "100");
  EXPECT_EQ(format_si(850, "B"), "850 B");
  EXPECT_EQ(format_si(999.4, "B"), "999 B");
  EXPECT_EQ(format_si(999.6, "B"), "1.00 kB");  // rounds up into the next prefix, never "1000 B"
  EXPECT_EQ(format_si(-2.5e9, "FLOP/s"), "-2.50 GFLOP/s");
  EXPECT_EQ(format_si(0.5, "B"), "0.50 B");
  EXPECT_EQ(format_si(std::numeric_limits<double>::infinity(), "B"), "n/a");
  EXPECT_EQ(format_bytes(5e8), "500 MB");
  EXPECT_EQ(format_count(1, "launch", "launches"), "1 launch");
  EXPECT_EQ(format_count(3, "launch", "launches"), "3 launches");
  EXPECT_EQ(format_count(0, "host sync", "host syncs"), "0 host syncs");
}

TEST(Format, TimesAndPercentages) {
  EXPECT_EQ(format_time(0), "0 s");
  EXPECT_EQ(format_time(850e-9), "850 ns");
  EXPECT_EQ(format_time(2.994e-3), "2.99 ms");
  EXPECT_EQ(format_time(1.5), "1.50 s");
  EXPECT_EQ(format_time(std::nan("")), "n/a");
  EXPECT_EQ(format_percent(0.0123), "1.2%");
  EXPECT_EQ(format_percent(0.00012), "0.012%");
  EXPECT_EQ(format_percent(0), "0%");
  EXPECT_EQ(format_percent(1e-7), "1.0e-05%");
}

TEST(Format, NumbersForAxisValues) {
  EXPECT_EQ(format_number(std::nan("")), "NaN");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_number(12345), "12345");  // more than 3 significant digits: written out
  EXPECT_EQ(format_number(2.5e7), "2.5e7");
  EXPECT_EQ(format_number(1e-5), "1e-5");
  EXPECT_EQ(format_number(0.333333), "0.333");
  EXPECT_EQ(format_axis_value(Json("Infinity")), "inf");  // a json_real spelling
  EXPECT_EQ(format_axis_value(Json("f32")), "f32");       // a word
  EXPECT_EQ(format_axis_value(Json(0.5)), "0.5");
  EXPECT_EQ(format_axis_value(Json(true)), "true");
}

TEST(Format, AxesInOrderAndSelected) {
  const Json axes = Json::parse(R"({"size": 100000000, "ratio": 0.7, "mode": "graph"})");
  EXPECT_EQ(format_axes(axes), "size=1e8, ratio=0.7, mode=graph");
  EXPECT_EQ(format_axes(axes, {"mode", "size"}), "size=1e8, mode=graph");  // the object's order, not `only`'s
  EXPECT_EQ(format_axes(Json(3)), "");
  EXPECT_EQ(format_axes(Json::object()), "");
}

}  // namespace
}  // namespace labrun
