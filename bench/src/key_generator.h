// KeyGenerator: picks the key number of each request from a range with one of memtier's key
// patterns (S sequential, P parallel, R uniform, G gaussian, Z zipfian). One generator per
// connection and command, so nothing is shared between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "rng.h"

namespace sp::bench {

enum class KeyPattern : uint8_t {
  kSequential,  // S: key i of connection c is min + (c + i * C) mod range: all connections together
                //    walk the range once in order, so n requests cover min..min+n-1
  kParallel,    // P: connection c walks its own contiguous 1/C of the range in order (wraps)
  kRandom,      // R: uniform over the range
  kGaussian,    // G: normal around --key-median with --key-stddev, redrawn until inside the range
  kZipf,        // Z: zipfian with exponent --zipf-theta; rank 1 (the hottest) is the range minimum
};

// "S", "P", "R", "G", "Z" (case-insensitive) -> pattern.
std::optional<KeyPattern> parseKeyPattern(std::string_view text);
char keyPatternLetter(KeyPattern pattern);

struct KeyRange {
  uint64_t min = 0;
  uint64_t max = 0;    // inclusive
  double median = -1;  // gaussian centre; < 0: the middle of the range
  double stddev = -1;  // gaussian spread; <= 0: range / 6
  double zipf_theta = 0.99;
  uint64_t size() const { return max - min + 1; }
};

// Rejection-inversion sampler for the Zipf distribution over ranks 1..n (Hörmann & Derflinger,
// "Rejection-inversion to generate variates from monotone discrete distributions", 1996): O(1)
// per sample and no table, so a range of billions of keys costs nothing to set up.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double exponent);
  uint64_t sample(Rng& rng) const;  // a rank in [1, n]

 private:
  double h(double x) const;
  double hIntegral(double x) const;
  double hIntegralInverse(double x) const;

  double n_;
  double exponent_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

class KeyGenerator {
 public:
  // `connection` of `connections` selects the stripe (S) or slice (P) this generator walks.
  KeyGenerator(KeyPattern pattern, const KeyRange& range, uint32_t connection, uint32_t connections,
               uint64_t seed);

  uint64_t next();
  Rng& rng() { return rng_; }

 private:
  KeyPattern pattern_;
  KeyRange range_;
  uint64_t size_;
  uint64_t cursor_ = 0;  // S: next stripe position; P: offset inside the slice
  uint64_t stride_ = 1;
  uint64_t slice_begin_ = 0;
  uint64_t slice_size_ = 1;
  double median_ = 0;
  double stddev_ = 1;
  std::optional<ZipfSampler> zipf_;
  Rng rng_;
};

}  // namespace sp::bench
