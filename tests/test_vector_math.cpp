// sin_n and exp_n (include/labrun/vector_math.hpp) against std::sin and std::exp on fresh random arguments: within
// libmvec's documented 4 ulp, in place and out of place, at lengths that leave every vector width a remainder.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <labrun/vector_math.hpp>

namespace labrun {
namespace {

double ulps_apart(double a, double b) {
  if (a == b) return 0;
  return std::fabs(a - b) / (std::nextafter(std::fabs(b), std::numeric_limits<double>::infinity()) - std::fabs(b));
}

TEST(VectorMath, SinAndExpAgreeWithTheScalarFunctionsWithin4Ulp) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> angle(-10.0, 10.0), power(-700.0, 700.0);
  for (const std::int64_t n : {0, 1, 3, 7, 8, 17, 1000, 4099}) {
    std::vector<double> x(static_cast<std::size_t>(n)), y(x.size()), z(x.size());
    for (auto& v : x) v = angle(rng);
    sin_n(x.data(), y.data(), n);
    z = x;
    sin_n(z.data(), z.data(), n);  // in place
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(ulps_apart(y[i], std::sin(x[i])), 4.0) << "sin(" << x[i] << ")";
      ASSERT_EQ(y[i], z[i]);
    }
    for (auto& v : x) v = power(rng);
    exp_n(x.data(), y.data(), n);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_LE(ulps_apart(y[i], std::exp(x[i])), 4.0) << "exp(" << x[i] << ")";
  }
}

TEST(VectorMath, SpecialValuesKeepTheirMeaning) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x{-inf, 0.0, inf, nan}, y(4);
  exp_n(x.data(), y.data(), 4);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_EQ(y[2], inf);
  EXPECT_TRUE(std::isnan(y[3]));
  sin_n(x.data(), y.data(), 4);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_TRUE(std::isnan(y[3]));
}

}  // namespace
}  // namespace labrun
