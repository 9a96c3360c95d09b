// MarkdownTable: a GitHub-flavoured Markdown table (pipes in cells escaped, numeric columns
// right-aligned), and the number formatting shared by every report.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp::bench {

class MarkdownTable {
 public:
  // `right_aligned[i]`: column i holds numbers (missing entries: left-aligned).
  explicit MarkdownTable(std::vector<std::string> header, std::vector<bool> right_aligned = {});
  void addRow(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// A value with `decimals` decimals, "—" when absent. Large counts get no separators, so tables
// read like the seed's.
std::string formatValue(std::optional<double> v, int decimals);
// "0.87×"
std::string formatRatio(double ratio);
// A file-name-safe slug: "SET requests/s" -> "set-requests-s".
std::string slugify(const std::string& text);

}  // namespace sp::bench
