// Markdown tables and number formatting.
#include "markdown_table.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace sp::bench {

MarkdownTable::MarkdownTable(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_(std::move(right_aligned)) {
  right_.resize(header_.size(), false);
}

void MarkdownTable::addRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

namespace {

std::string escape(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? " " : out;
}

}  // namespace

std::string MarkdownTable::render() const {
  std::string out = "|";
  for (const auto& h : header_) {
    out += ' ';
    out += escape(h);
    out += " |";
  }
  out += "\n|";
  for (size_t i = 0; i < header_.size(); ++i) {
    out += right_[i] ? " --: |" : " -- |";
  }
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (const auto& c : row) {
      out += ' ';
      out += escape(c);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

std::string formatValue(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) {
    return "—";
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, *v);
  return buf;
}

std::string formatRatio(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f×", ratio);
  return buf;
}

std::string slugify(const std::string& text) {
  std::string out;
  bool dash = false;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      if (dash && !out.empty()) {
        out += '-';
      }
      dash = false;
      out += static_cast<char>(std::tolower(c));
    } else {
      dash = true;
    }
    if (out.size() >= 60) {
      break;
    }
  }
  return out.empty() ? "table" : out;
}

}  // namespace sp::bench
