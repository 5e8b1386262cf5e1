// Boxed<T> (src/base/boxed.hpp): the heap-held optional of PointRecord's large parts keeps std::optional's value
// semantics, so records copy, compare and trim as before.
#include "boxed.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "point_record.hpp"

namespace labrun {
namespace {

TEST(Boxed, EmptyByDefaultAndFromNullopt) {
  Boxed<std::string> a;
  EXPECT_FALSE(a.has_value());
  EXPECT_FALSE(a);
  EXPECT_TRUE(a == std::nullopt);
  EXPECT_THROW(a.value(), std::bad_optional_access);
  a = std::string("x");
  a = std::nullopt;
  EXPECT_FALSE(a);
}

TEST(Boxed, CopiesAreDeepAndMovesTakeTheValue) {
  Boxed<std::vector<double>> a = std::vector<double>{1.0, 2.0};
  Boxed<std::vector<double>> b = a;
  b->push_back(3.0);
  EXPECT_EQ(a->size(), 2u);
  EXPECT_EQ(b->size(), 3u);
  a = b;
  EXPECT_EQ(a.value(), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_NE(&*a, &*b);
  Boxed<std::vector<double>> c = std::move(b);
  EXPECT_TRUE(c);
  EXPECT_EQ(c->size(), 3u);
}

TEST(Boxed, EmplaceReplacesAndResetEmpties) {
  Boxed<std::string> a = std::string(100, 'a');
  a.emplace(3, 'b');
  EXPECT_EQ(*a, "bbb");
  a.reset();
  EXPECT_FALSE(a.has_value());
  EXPECT_EQ(sizeof(a), sizeof(void*));
}

// The point of boxing: a record's inline size no longer carries its timing and interpretation (was 2208 bytes,
// 100,000 of them per side of a diff).
TEST(Boxed, PointRecordKeepsItsLargePartsOffTheRecord) {
  EXPECT_LT(sizeof(PointRecord), 600u);
  PointRecord p;
  p.timing.emplace();
  p.timing->device_samples_s = {1e-6, 2e-6};
  PointRecord q = p;
  q.timing->device_samples_s.push_back(3e-6);
  EXPECT_EQ(p.timing->device_samples_s.size(), 2u);
  EXPECT_EQ(to_json(p)["timing"]["device_samples_s"].size(), 2u);
}

}  // namespace
}  // namespace labrun
