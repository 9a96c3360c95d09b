// Scenario: one seed table as data, loaded from conf/scenarios/*.yaml. It names the seed file and
// section it reproduces, the shardbench runs that make its points (a sweep of one flag, or named
// points, each one run or several concurrent runs), the quick and full scales, the tables to
// print (laid out like the seed's) with the seed's published numbers, and the charts to draw.
// See conf/scenarios/README.md for the format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metric.h"
#include "template_expr.h"

namespace sp::bench {

struct RunSpec {
  std::string name;  // "" when the point has a single run
  std::string args;  // shardbench flags (a template), without -h/-p
};

struct PointSpec {
  std::string label;          // column or row label: the sweep value or the point's name
  std::vector<RunSpec> runs;  // run concurrently; rows of run "x" are named "x/ROW"
  VarMap vars;                // the sweep's {value}
};

struct ScaleSpec {
  std::vector<std::string> values;  // labels of the points to run; empty: all
  std::string args;                 // appended to every run
  std::vector<std::pair<std::string, std::string>> point_args;  // label -> args appended
  VarMap vars;
};

struct TableItem {  // a row of a rows-layout table
  std::string label;
  std::string point;
  std::string row;
};

struct TableColumn {  // a column of a rows-layout table
  std::string title;
  Metric metric = Metric::kQps;
  std::string row;  // overrides the item's row ("Totals")
};

struct ChartSpec {
  enum class Kind : uint8_t { kLine, kBar };
  Kind kind = Kind::kLine;
  size_t column = 0;  // rows layout: which column to draw
};

struct PublishedSeries {
  std::string name;
  // Columns layout: cells[0][i] belongs to the i-th point of the full sweep.
  // Rows layout: cells[item][column].
  std::vector<std::vector<std::optional<double>>> cells;
};

struct TableSpec {
  std::string title;
  bool rows_layout = false;
  // Columns layout: one row name and metric; the points are the columns, series the rows.
  std::string row;
  Metric metric = Metric::kQps;
  // Rows layout: items (rows, per series) x columns (metrics).
  std::vector<TableItem> items;
  bool items_from_sweep = false;  // one item per point, all with `row`
  std::vector<TableColumn> columns;
  std::vector<ChartSpec> charts;
  std::vector<std::string> chart_published;  // published series drawn; empty: all
  std::vector<PublishedSeries> published;
};

struct Scenario {
  std::string path;
  std::string name;
  std::string title;
  std::string seed_file;
  std::string seed_section;
  std::string seed_command;
  std::string notes;
  std::string args;       // every run
  bool stateful = false;  // points depend on earlier ones: flush, then all points per target
  int local_shards = 4;   // default of --local-shards
  VarMap vars;
  std::vector<std::pair<std::string, ScaleSpec>> scales;         // "quick", "full"
  std::string memory_estimate;                                   // bytes, a template
  std::vector<std::pair<std::string, std::string>> report_vars;  // title -> template
  bool measure_proxy_rss = false;
  bool measure_info_clients = false;
  bool measure_shard_memory = false;
  bool has_sweep = false;
  std::string sweep_title;
  bool fit_open_files = false;
  std::vector<PointSpec> points;
  std::vector<TableSpec> tables;

  const ScaleSpec* scale(std::string_view scale_name) const;
  const PointSpec* point(std::string_view label) const;
};

// Loads and checks a scenario file. False with every problem found, one per line, each naming
// its YAML path ("tables[1].published.Kuaijie 1G: 10 values for 11 points").
bool loadScenario(const std::string& path, Scenario* out, std::string* error);
bool parseScenario(std::string_view yaml_text, const std::string& path, Scenario* out,
                   std::string* error);

}  // namespace sp::bench
