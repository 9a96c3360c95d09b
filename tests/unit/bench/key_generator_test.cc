// Key patterns: exact coverage for S and P, distributions within stated tolerances for R, G, Z.
#include "key_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace sp::bench {
namespace {

TEST(KeyPatternTest, ParsesLetters) {
  EXPECT_EQ(parseKeyPattern("S"), KeyPattern::kSequential);
  EXPECT_EQ(parseKeyPattern("p"), KeyPattern::kParallel);
  EXPECT_EQ(parseKeyPattern("R"), KeyPattern::kRandom);
  EXPECT_EQ(parseKeyPattern("G"), KeyPattern::kGaussian);
  EXPECT_EQ(parseKeyPattern("z"), KeyPattern::kZipf);
  EXPECT_FALSE(parseKeyPattern("X"));
  EXPECT_FALSE(parseKeyPattern("SR"));
  EXPECT_FALSE(parseKeyPattern(""));
}

// S: connection c of C yields min + c, min + c + C, ...: together n requests cover exactly n keys.
TEST(KeyGeneratorTest, SequentialStripesCoverTheRangeInOrder) {
  const KeyRange range{100, 1099};  // 1000 keys
  const uint32_t conns = 7;
  std::set<uint64_t> seen;
  std::vector<KeyGenerator> gens;
  for (uint32_t c = 0; c < conns; ++c) {
    gens.emplace_back(KeyPattern::kSequential, range, c, conns, 1);
  }
  // 700 requests spread round-robin: exactly keys 100..799.
  for (int i = 0; i < 100; ++i) {
    for (uint32_t c = 0; c < conns; ++c) {
      const uint64_t k = gens[c].next();
      EXPECT_EQ(k, 100 + c + static_cast<uint64_t>(i) * conns);
      seen.insert(k);
    }
  }
  EXPECT_EQ(seen.size(), 700u);
  EXPECT_EQ(*seen.begin(), 100u);
  EXPECT_EQ(*seen.rbegin(), 799u);
}

TEST(KeyGeneratorTest, SequentialWrapsAroundTheRange) {
  const KeyRange range{0, 9};
  KeyGenerator g(KeyPattern::kSequential, range, 3, 4, 1);
  std::vector<uint64_t> got;
  for (int i = 0; i < 6; ++i) {
    got.push_back(g.next());
  }
  EXPECT_EQ(got, (std::vector<uint64_t>{3, 7, 1, 5, 9, 3}));
}

TEST(KeyGeneratorTest, SequentialWithMoreConnectionsThanKeys) {
  const KeyRange range{0, 2};
  KeyGenerator g(KeyPattern::kSequential, range, 4, 5, 1);  // stride 5 mod 3 = 2
  EXPECT_EQ(g.next(), 1u);
  EXPECT_EQ(g.next(), 0u);
  EXPECT_EQ(g.next(), 2u);
}

TEST(KeyGeneratorTest, ParallelSlicesAreDisjointAndComplete) {
  const KeyRange range{0, 1002};  // 1003 keys over 4 connections: 251, 251, 251, 250
  std::set<uint64_t> all;
  for (uint32_t c = 0; c < 4; ++c) {
    KeyGenerator g(KeyPattern::kParallel, range, c, 4, 1);
    std::set<uint64_t> mine;
    const uint64_t first = g.next();
    mine.insert(first);
    for (int i = 1; i < 260; ++i) {
      mine.insert(g.next());
    }
    EXPECT_EQ(mine.size(), c < 3 ? 251u : 250u) << "connection " << c;
    for (uint64_t k : mine) {
      EXPECT_TRUE(all.insert(k).second) << "key " << k << " in two slices";
    }
  }
  EXPECT_EQ(all.size(), 1003u);
}

// R: 200k draws into 20 buckets; every bucket within 3% of its expected 10k (the standard
// deviation of a bucket count is ~97, so 3% is about 3 sigma).
TEST(KeyGeneratorTest, RandomIsUniformWithinThreePercent) {
  const KeyRange range{1000, 2999};
  KeyGenerator g(KeyPattern::kRandom, range, 0, 1, 42);
  std::vector<int> buckets(20, 0);
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const uint64_t k = g.next();
    ASSERT_GE(k, 1000u);
    ASSERT_LE(k, 2999u);
    buckets[(k - 1000) / 100]++;
  }
  for (int b : buckets) {
    EXPECT_NEAR(b, n / 20, n / 20 * 0.03);
  }
}

TEST(KeyGeneratorTest, RandomHitsBothEnds) {
  const KeyRange range{0, 3};
  KeyGenerator g(KeyPattern::kRandom, range, 0, 1, 7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 200; ++i) {
    seen.insert(g.next());
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{0, 1, 2, 3}));
}

// G: mean within 0.5% of the range of the median, standard deviation within 3% of the requested
// one, and about 68.3% (+-1%) of the draws within one standard deviation.
TEST(KeyGeneratorTest, GaussianHasTheRequestedMeanAndSpread) {
  KeyRange range{0, 999999};
  range.median = 300000;
  range.stddev = 50000;
  KeyGenerator g(KeyPattern::kGaussian, range, 0, 1, 9);
  const int n = 200000;
  double sum = 0;
  double sq = 0;
  int within = 0;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<double>(g.next());
    sum += k;
    sq += k * k;
    within += std::fabs(k - 300000) <= 50000 ? 1 : 0;
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 300000, 5000);
  EXPECT_NEAR(sd, 50000, 1500);
  EXPECT_NEAR(static_cast<double>(within) / n, 0.6827, 0.01);
}

TEST(KeyGeneratorTest, GaussianDefaultsToTheMiddleAndStaysInRange) {
  const KeyRange range{10, 109};
  KeyGenerator g(KeyPattern::kGaussian, range, 0, 1, 3);
  double sum = 0;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t k = g.next();
    ASSERT_GE(k, 10u);
    ASSERT_LE(k, 109u);
    sum += static_cast<double>(k);
  }
  EXPECT_NEAR(sum / 50000, 59.5, 0.5);
}

// Z: frequencies of the hottest ranks within 5% of 1/(k^s H(N,s)), for s = 0.99 and s = 1.2.
class ZipfTest : public ::testing::TestWithParam<double> {};

TEST_P(ZipfTest, RankFrequenciesMatchTheZipfLaw) {
  const double s = GetParam();
  const uint64_t n = 1000;
  KeyRange range{0, n - 1};
  range.zipf_theta = s;
  KeyGenerator g(KeyPattern::kZipf, range, 0, 1, 11);
  double h = 0;
  for (uint64_t k = 1; k <= n; ++k) {
    h += 1.0 / std::pow(static_cast<double>(k), s);
  }
  std::map<uint64_t, int> counts;
  const int draws = 400000;
  for (int i = 0; i < draws; ++i) {
    const uint64_t k = g.next();
    ASSERT_LT(k, n);
    counts[k]++;
  }
  for (uint64_t rank : {1, 2, 3, 5, 10}) {
    const double expected = draws / std::pow(static_cast<double>(rank), s) / h;
    EXPECT_NEAR(counts[rank - 1], expected, expected * 0.05) << "rank " << rank;
  }
  // The tail: keys 500..999 together.
  double tail_expected = 0;
  for (uint64_t k = 501; k <= n; ++k) {
    tail_expected += draws / std::pow(static_cast<double>(k), s) / h;
  }
  int tail = 0;
  for (uint64_t k = 500; k < n; ++k) {
    tail += counts[k];
  }
  EXPECT_NEAR(tail, tail_expected, tail_expected * 0.05);
}

INSTANTIATE_TEST_SUITE_P(Exponents, ZipfTest, ::testing::Values(0.99, 1.2));

TEST(KeyGeneratorTest, ZipfOnAHugeRangeNeedsNoTable) {
  KeyRange range{0, 4000000000ull};
  KeyGenerator g(KeyPattern::kZipf, range, 0, 1, 5);
  int zero = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t k = g.next();
    ASSERT_LE(k, range.max);
    zero += k == 0 ? 1 : 0;
  }
  EXPECT_GT(zero, 100);  // rank 1 is about 4% of draws for s=0.99 at this size
}

TEST(KeyGeneratorTest, SameSeedSameSequence) {
  const KeyRange range{0, 1000000};
  KeyGenerator a(KeyPattern::kRandom, range, 0, 1, 77);
  KeyGenerator b(KeyPattern::kRandom, range, 0, 1, 77);
  KeyGenerator c(KeyPattern::kRandom, range, 0, 1, 78);
  int same_c = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    same_c += x == c.next() ? 1 : 0;
  }
  EXPECT_LT(same_c, 3);
}

}  // namespace
}  // namespace sp::bench
