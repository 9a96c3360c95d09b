// Key patterns: sequential stripes, parallel slices, uniform, gaussian and zipfian choices.
#include "key_generator.h"

#include <algorithm>
#include <cmath>

namespace sp::bench {

std::optional<KeyPattern> parseKeyPattern(std::string_view text) {
  if (text.size() != 1) {
    return std::nullopt;
  }
  switch (text[0]) {
    case 'S':
    case 's':
      return KeyPattern::kSequential;
    case 'P':
    case 'p':
      return KeyPattern::kParallel;
    case 'R':
    case 'r':
      return KeyPattern::kRandom;
    case 'G':
    case 'g':
      return KeyPattern::kGaussian;
    case 'Z':
    case 'z':
      return KeyPattern::kZipf;
    default:
      return std::nullopt;
  }
}

char keyPatternLetter(KeyPattern pattern) {
  switch (pattern) {
    case KeyPattern::kSequential:
      return 'S';
    case KeyPattern::kParallel:
      return 'P';
    case KeyPattern::kRandom:
      return 'R';
    case KeyPattern::kGaussian:
      return 'G';
    case KeyPattern::kZipf:
      return 'Z';
  }
  return '?';
}

namespace {

// log1p(x) / x, continuous at 0.
double helper1(double x) {
  if (std::fabs(x) > 1e-8) {
    return std::log1p(x) / x;
  }
  return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

// expm1(x) / x, continuous at 0.
double helper2(double x) {
  if (std::fabs(x) > 1e-8) {
    return std::expm1(x) / x;
  }
  return 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

}  // namespace

ZipfSampler::ZipfSampler(uint64_t n, double exponent)
    : n_(static_cast<double>(n)), exponent_(exponent) {
  h_integral_x1_ = hIntegral(1.5) - 1.0;
  h_integral_n_ = hIntegral(n_ + 0.5);
  s_ = 2.0 - hIntegralInverse(hIntegral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfSampler::hIntegral(double x) const {
  const double log_x = std::log(x);
  return helper2((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::hIntegralInverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) {
    t = -1.0;  // rounding can push it just past the pole
  }
  return std::exp(helper1(t) * x);
}

uint64_t ZipfSampler::sample(Rng& rng) const {
  for (;;) {
    const double u = h_integral_n_ + rng.unit() * (h_integral_x1_ - h_integral_n_);
    const double x = hIntegralInverse(u);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, n_);
    if (k - x <= s_ || u >= hIntegral(k + 0.5) - h(k)) {
      return static_cast<uint64_t>(k);
    }
  }
}

KeyGenerator::KeyGenerator(KeyPattern pattern, const KeyRange& range, uint32_t connection,
                           uint32_t connections, uint64_t seed)
    : pattern_(pattern), range_(range), size_(range.size()), rng_(seed) {
  const uint64_t count = std::max<uint32_t>(connections, 1);
  switch (pattern_) {
    case KeyPattern::kSequential:
      cursor_ = connection % size_;
      stride_ = count % size_;
      break;
    case KeyPattern::kParallel: {
      // Slices as even as possible: the first (size % count) slices get one key more.
      const uint64_t base = size_ / count;
      const uint64_t extra = size_ % count;
      const uint64_t c = connection % count;
      slice_begin_ = c * base + std::min<uint64_t>(c, extra);
      slice_size_ = std::max<uint64_t>(base + (c < extra ? 1 : 0), 1);
      if (slice_begin_ >= size_) {
        slice_begin_ = c % size_;  // more connections than keys: share
        slice_size_ = 1;
      }
      break;
    }
    case KeyPattern::kGaussian:
      median_ = range_.median >= 0
                    ? range_.median
                    : static_cast<double>(range_.min) + (static_cast<double>(size_) - 1) / 2;
      stddev_ = range_.stddev > 0 ? range_.stddev : static_cast<double>(size_) / 6;
      break;
    case KeyPattern::kZipf:
      zipf_.emplace(size_, range_.zipf_theta);
      break;
    case KeyPattern::kRandom:
      break;
  }
}

uint64_t KeyGenerator::next() {
  switch (pattern_) {
    case KeyPattern::kSequential: {
      const uint64_t key = range_.min + cursor_;
      cursor_ += stride_;
      if (cursor_ >= size_) {
        cursor_ -= size_;
      }
      return key;
    }
    case KeyPattern::kParallel: {
      const uint64_t key = range_.min + slice_begin_ + cursor_;
      if (++cursor_ == slice_size_) {
        cursor_ = 0;
      }
      return key;
    }
    case KeyPattern::kRandom:
      return range_.min + rng_.below(size_);
    case KeyPattern::kGaussian:
      for (;;) {
        // Box-Muller; one of the pair is enough here.
        const double u1 = 1.0 - rng_.unit();
        const double u2 = rng_.unit();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        const double v = std::round(median_ + z * stddev_);
        if (v >= static_cast<double>(range_.min) && v <= static_cast<double>(range_.max)) {
          return static_cast<uint64_t>(v);
        }
      }
    case KeyPattern::kZipf:
      return range_.min + zipf_->sample(rng_) - 1;
  }
  return range_.min;
}

}  // namespace sp::bench
