// SVG charts written by shardbench itself (no plotting stack needed): a line chart with one line
// per series over categorical x values (sweeps), a grouped bar chart (workloads, key types) and a
// heat map (the proxy-worker x shard matrix). Plain SVG 1.1 with inline styles, so the files
// open in any browser and convert with rsvg-convert. A chart claims only what it draws: the
// "published" caption appears exactly when a reference series is drawn (dashed), and the font
// stack names CJK fallbacks so the Chinese titles render where those fonts are installed.
// Repeated measurements draw their min–max range: whiskers on points and bars, a line of text
// under the value in heat-map cells.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp::bench {

// The min–max of a value's repetitions.
struct ValueRange {
  double min = 0;
  double max = 0;
};

struct ChartSeries {
  std::string name;
  std::vector<std::optional<double>> values;  // one per x label; missing values break the line
  bool reference = false;                     // a published (seed) series: dashed and lighter
  // Per value (may be shorter): drawn as a whisker when min < max; the subtitle then says so.
  std::vector<std::optional<ValueRange>> ranges;
};

// Said of every published series, in the legend and the subtitle.
inline constexpr const char* kPublishedCaption = "published, other hardware and network";
// Said once in the subtitle of a chart that draws min–max whiskers.
inline constexpr const char* kRangeCaption = "whiskers: min\u2013max of the repetitions";
// The font stack of every chart: Latin and Vietnamese from DejaVu, Chinese from Noto CJK or
// WenQuanYi (Debian: fonts-noto-cjk), whatever sans-serif the viewer has otherwise.
inline constexpr const char* kFontFamily =
    "'DejaVu Sans', 'Noto Sans CJK SC', 'Noto Sans CJK', 'WenQuanYi Micro Hei', sans-serif";

struct ChartData {
  std::string title;
  std::string subtitle;
  std::string x_title;
  std::string y_title;
  std::vector<std::string> x_labels;
  std::vector<ChartSeries> series;
  // Where the reference series were published ("004_9d877cbfcd12be33.txt"); the subtitle says
  // "dashed: published in SOURCE, other hardware and network" only when one of them is drawn.
  std::string published_source;
};

std::string lineChartSvg(const ChartData& data);
std::string barChartSvg(const ChartData& data);

struct HeatMapData {
  std::string title;
  std::string subtitle;   // one line per '\n'-separated part (the frame widens to fit)
  std::string row_title;  // "shards"
  std::string col_title;  // "proxy workers"
  std::vector<std::string> rows;
  std::vector<std::string> cols;
  std::vector<std::vector<std::optional<double>>> values;  // [row][col]; missing: grey
  std::vector<std::vector<std::string>> notes;  // [row][col]: "failed", "†" (shown in the cell)
  // [row][col] (may be shorter): the min–max of the repetitions, written under the value.
  std::vector<std::vector<std::optional<ValueRange>>> ranges;
  std::string legend;  // "requests/s"; the scale starts at 0
};

std::string heatMapSvg(const HeatMapData& data);

// "12.3k", "1.5M", "950": axis and cell labels.
std::string shortNumber(double v);
// A label broken into lines of at most `width` characters (code points) at spaces; a word longer
// than a line is shortened to whole characters and an ellipsis, never split across lines.
std::vector<std::string> wrapLabel(const std::string& text, size_t width);
// Escapes &, <, >, " for SVG text and attributes.
std::string xmlEscape(const std::string& text);

}  // namespace sp::bench
