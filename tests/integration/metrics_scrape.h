// Helpers for the metrics tests: a plain HTTP/1.0 GET over loopback (no curl) and a reader for
// the Prometheus text format that sums the samples of a metric matching some labels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace sp::test {

// GET http://127.0.0.1:port/path; the body, or "" when the request failed. *status gets the HTTP
// status code (0 on failure).
std::string httpGet(uint16_t port, const std::string& path, int* status = nullptr);

// A parsed scrape: one entry per sample line, keyed by the series as written
// (`name{a="1",b="2"}`), in its text form.
class Scrape {
 public:
  explicit Scrape(std::string text);
  const std::string& text() const { return text_; }
  bool ok() const { return !samples_.empty(); }

  // Sum of every sample of `name` whose labels include all of `labels` (exact values).
  double sum(std::string_view name, const std::map<std::string, std::string>& labels = {}) const;
  // Number of samples of `name` matching `labels`.
  size_t count(std::string_view name, const std::map<std::string, std::string>& labels = {}) const;
  // True when a `# TYPE name ...` line declares the family.
  bool hasFamily(std::string_view name) const;

 private:
  struct Sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
  };
  std::string text_;
  std::multimap<std::string, Sample> samples_;  // by name
};

// Scrapes 127.0.0.1:port/metrics.
Scrape scrape(uint16_t port);

}  // namespace sp::test
