// Spreads: the median and min–max of repetitions, and the overlap rule reports use before they
// call two results different.
#include "spread.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sp::bench {
namespace {

Spread of(std::vector<double> values) {
  auto s = spreadOf(std::move(values));
  EXPECT_TRUE(s.has_value());
  return s.value_or(Spread{});
}

TEST(SpreadTest, MedianMinMaxAndEveryValueInOrder) {
  const Spread odd = of({130, 118, 123});
  EXPECT_EQ(odd.median, 123);
  EXPECT_EQ(odd.min, 118);
  EXPECT_EQ(odd.max, 130);
  EXPECT_EQ(odd.values, (std::vector<double>{130, 118, 123}));  // repetition order, not sorted
  EXPECT_EQ(odd.count(), 3u);
  EXPECT_TRUE(odd.measured());

  const Spread even = of({4, 1, 3, 2});
  EXPECT_EQ(even.median, 2.5);
  EXPECT_EQ(even.min, 1);
  EXPECT_EQ(even.max, 4);

  const Spread one = of({7});
  EXPECT_EQ(one.median, 7);
  EXPECT_EQ(one.min, 7);
  EXPECT_EQ(one.max, 7);
  EXPECT_FALSE(one.measured());
}

TEST(SpreadTest, NoValuesNoSpread) {
  EXPECT_FALSE(spreadOf({}).has_value());
  EXPECT_FALSE(spreadOf({NAN, INFINITY}).has_value());
  const Spread s = of({NAN, 5, 3});
  EXPECT_EQ(s.count(), 2u);  // a value that is not a number is not a repetition
  EXPECT_EQ(s.median, 4);
}

TEST(SpreadTest, RangesOverlapWhenTheyShareAPoint) {
  EXPECT_TRUE(rangesOverlap(of({1, 3}), of({2, 4})));
  EXPECT_TRUE(rangesOverlap(of({2, 4}), of({1, 3})));
  EXPECT_TRUE(rangesOverlap(of({1, 10}), of({4, 5})));  // one inside the other
  EXPECT_TRUE(rangesOverlap(of({1, 3}), of({3, 5})));   // touching counts
  EXPECT_FALSE(rangesOverlap(of({1, 2}), of({3, 4})));
  EXPECT_FALSE(rangesOverlap(of({3, 4}), of({1, 2})));
}

TEST(SpreadTest, ADifferenceNeedsApartRangesOfMeasuredSpreads) {
  EXPECT_EQ(compareSpreads(of({100, 110, 105}), of({120, 130, 125})), Verdict::kDifferent);
  EXPECT_EQ(compareSpreads(of({100, 121, 105}), of({120, 130, 125})), Verdict::kWithinNoise);
  // The medians differ by 30% but one side ran once: there is no noise to test against.
  EXPECT_EQ(compareSpreads(of({100}), of({130, 131})), Verdict::kUntested);
  EXPECT_EQ(compareSpreads(of({130, 131}), of({100})), Verdict::kUntested);
  EXPECT_EQ(compareSpreads(of({100}), of({130})), Verdict::kUntested);
}

TEST(SpreadTest, FormatShowsTheRangeOnlyWhenThereIsOne) {
  EXPECT_EQ(formatSpread(of({123456, 118000, 130100}), 0), "123456 (118000\u2013130100)");
  EXPECT_EQ(formatSpread(of({1.25, 1.5}), 2), "1.38 (1.25\u20131.50)");
  EXPECT_EQ(formatSpread(of({42}), 0), "42");
  EXPECT_EQ(formatSpread(of({0, 0, 0}), 0), "0");         // all equal: a point
  EXPECT_EQ(formatSpread(of({1.001, 1.002}), 1), "1.0");  // equal at the shown precision
  EXPECT_EQ(formatSpread(std::optional<Spread>(), 0), "—");
}

}  // namespace
}  // namespace sp::bench
