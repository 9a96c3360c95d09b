// SVG charts written by shardbench itself (no plotting stack needed): a line chart with one line
// per series over categorical x values (sweeps), a grouped bar chart (workloads, key types) and a
// heat map (the proxy-worker x shard matrix). Plain SVG 1.1 with inline styles, so the files
// open in any browser and convert with rsvg-convert.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sp::bench {

struct ChartSeries {
  std::string name;
  std::vector<std::optional<double>> values;  // one per x label; missing values break the line
  bool reference = false;                     // a published (seed) series: dashed and lighter
};

struct ChartData {
  std::string title;
  std::string subtitle;
  std::string x_title;
  std::string y_title;
  std::vector<std::string> x_labels;
  std::vector<ChartSeries> series;
};

std::string lineChartSvg(const ChartData& data);
std::string barChartSvg(const ChartData& data);

struct HeatMapData {
  std::string title;
  std::string subtitle;
  std::string row_title;  // "shards"
  std::string col_title;  // "proxy workers"
  std::vector<std::string> rows;
  std::vector<std::string> cols;
  std::vector<std::vector<std::optional<double>>> values;  // [row][col]; missing: grey
  std::vector<std::vector<std::string>> notes;  // [row][col]: "failed", "†" (shown in the cell)
  std::string legend;                           // "requests/s"
};

std::string heatMapSvg(const HeatMapData& data);

// "12.3k", "1.5M", "950": axis and cell labels.
std::string shortNumber(double v);
// Escapes &, <, >, " for SVG text and attributes.
std::string xmlEscape(const std::string& text);

}  // namespace sp::bench
