// Building tables, charts and result files from a scenario's measurements.
#include "scenario_report.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "json_writer.h"
#include "markdown_table.h"
#include "scale_label.h"
#include "svg_chart.h"

namespace sp::bench {
namespace {

bool writeFile(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

// Footnotes: each distinct message once, numbered, with the cells it applies to.
class Notes {
 public:
  std::string mark(const std::string& message, const std::string& where) {
    for (size_t i = 0; i < notes_.size(); ++i) {
      if (notes_[i].first == message) {
        auto& places = notes_[i].second;
        if (std::find(places.begin(), places.end(), where) == places.end()) {
          places.push_back(where);
        }
        return "[" + std::to_string(i + 1) + "]";
      }
    }
    notes_.push_back({message, {where}});
    return "[" + std::to_string(notes_.size()) + "]";
  }
  std::string render() const {
    std::string out;
    for (size_t i = 0; i < notes_.size(); ++i) {
      std::string where;
      for (const auto& w : notes_[i].second) {
        if (!where.empty()) {
          where += ", ";
        }
        where += w;
      }
      out += "- [" + std::to_string(i + 1) + "] " + where + ": " + notes_[i].first + "\n";
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> notes_;
};

// One table cell's numbers, for results.json: every repetition's value, median and min–max.
struct SpreadCell {
  std::string target;
  std::string item;
  std::string row;
  Metric metric;
  Spread spread;
};

std::optional<ValueRange> rangeOf(const std::optional<Spread>& s) {
  if (!s || !s->measured()) {
    return std::nullopt;
  }
  return ValueRange{s->min, s->max};
}

// The text of one cell for our target: value (median and min–max), ratio to the first target,
// or the failure.
std::string ourCell(const std::vector<const Measurement*>& reps,
                    const std::vector<const Measurement*>& first_reps, bool is_first,
                    const std::string& row, Metric metric, Notes* notes, const std::string& where,
                    bool with_ratio) {
  if (reps.empty()) {
    return "not run";
  }
  const auto v = spreadValue(reps, row, metric);
  size_t failed = 0;
  std::string message;
  MeasureStatus status = MeasureStatus::kOk;
  for (const Measurement* m : reps) {
    if (m->status != MeasureStatus::kOk) {
      ++failed;
      message = m->message;
      status = m->status;
    }
  }
  if (!v) {
    if (failed > 0) {
      return std::string(statusName(status)) + " " + notes->mark(message, where);
    }
    return "—";
  }
  std::string text = formatSpread(*v, metricInfo(metric).decimals);
  if (!is_first && with_ratio) {
    const auto base = spreadValue(first_reps, row, metric);
    if (base && base->median > 0) {
      text += " (" + ratioText(*v, *base) + ")";
    }
  }
  if (failed > 0) {
    text += " " + std::to_string(failed) + " of " + std::to_string(reps.size()) + " " +
            std::string(statusName(status)) + " " + notes->mark(message, where);
  }
  return text;
}

std::string publishedCell(const std::optional<double>& v, Metric metric) {
  return formatValue(v, metricInfo(metric).decimals);
}

struct Built {
  std::string markdown;
  std::vector<std::pair<std::string, std::string>> charts;  // file name, svg
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<SpreadCell> spreads;
};

// Index of a point in the scenario's full list (published values are aligned with it).
std::optional<size_t> seedIndex(const Scenario& s, const std::string& label) {
  for (size_t i = 0; i < s.points.size(); ++i) {
    if (s.points[i].label == label) {
      return i;
    }
  }
  return std::nullopt;
}

bool drawn(const TableSpec& t, const std::string& name) {
  return t.chart_published.empty() || std::find(t.chart_published.begin(), t.chart_published.end(),
                                                name) != t.chart_published.end();
}

// The chart says what its dashed series are (svg_chart.cc) only when it draws one.
std::string chartSubtitle(const ScenarioRun& run) {
  return run.scenario->name + " (" + run.plan->scale + " scale), " +
         std::to_string(run.machine.nproc) + " CPUs";
}

// A rows-layout chart draws one column, so its title names that column and the axis, not the
// table's title (which may name columns the chart does not draw, e.g. "... and proxy memory").
std::string columnChartTitle(const std::string& column, const std::string& axis) {
  std::string by = axis.empty() ? "workload" : axis;
  if (by.size() > 1 && std::isupper(static_cast<unsigned char>(by[0])) &&
      std::islower(static_cast<unsigned char>(by[1]))) {
    by[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(by[0])));
  }
  return column + " by " + by;
}

Built buildColumnsTable(const ScenarioRun& run, const TableSpec& t, size_t index) {
  Built b;
  const Scenario& s = *run.scenario;
  Notes notes;
  std::vector<std::string> header = {s.sweep_title};
  std::vector<bool> right = {false};
  for (const auto& p : run.plan->points) {
    header.push_back(p.label);
    right.push_back(true);
  }
  MarkdownTable table(header, right);
  b.header = header;
  ChartData chart;
  chart.title = scaleTitle(t.title, run.plan->scale);
  chart.subtitle = chartSubtitle(run);
  chart.published_source = s.seed_file;
  chart.x_title = s.sweep_title;
  chart.y_title = std::string(metricInfo(t.metric).title) + " (" + t.row + ")";
  for (const auto& p : run.plan->points) {
    chart.x_labels.push_back(p.label);
  }
  for (size_t ti = 0; ti < run.targets.size(); ++ti) {
    const Target& target = run.targets[ti];
    std::vector<std::string> cells = {target.name + " (this machine)"};
    ChartSeries series;
    series.name = target.name + " (this machine)";
    for (const auto& p : run.plan->points) {
      const auto reps = measurementsOf(run.measurements, p.label, target.name);
      const auto first = measurementsOf(run.measurements, p.label, run.targets[0].name);
      cells.push_back(ourCell(reps, first, ti == 0, t.row, t.metric, &notes,
                              p.label + " × " + target.name, true));
      const auto spread = spreadValue(reps, t.row, t.metric);
      series.values.push_back(spread ? std::optional<double>(spread->median) : std::nullopt);
      series.ranges.push_back(rangeOf(spread));
      if (spread) {
        b.spreads.push_back({target.name, p.label, t.row, t.metric, *spread});
      }
    }
    table.addRow(cells);
    b.rows.push_back(cells);
    chart.series.push_back(std::move(series));
  }
  for (const auto& pub : t.published) {
    std::vector<std::string> cells = {"seed: " + pub.name};
    ChartSeries series;
    series.name = "seed: " + pub.name;
    series.reference = true;
    for (const auto& p : run.plan->points) {
      std::optional<double> v;
      if (auto i = seedIndex(s, p.label); i && !pub.cells.empty() && *i < pub.cells[0].size()) {
        v = pub.cells[0][*i];
      }
      cells.push_back(publishedCell(v, t.metric));
      series.values.push_back(v);
    }
    table.addRow(cells);
    b.rows.push_back(cells);
    if (drawn(t, pub.name)) {
      chart.series.push_back(std::move(series));
    }
  }
  b.markdown = table.render();
  const std::string footnotes = notes.render();
  if (!footnotes.empty()) {
    b.markdown += "\n" + footnotes;
  }
  if (!t.charts.empty()) {
    const std::string file = std::to_string(index + 1) + "-" + slugify(t.row) + "-" +
                             slugify(std::string(metricInfo(t.metric).name)) + ".svg";
    b.charts.emplace_back(scaleFileName(file, run.plan->scale), lineChartSvg(chart));
  }
  return b;
}

Built buildRowsTable(const ScenarioRun& run, const TableSpec& t, size_t index) {
  Built b;
  const Scenario& s = *run.scenario;
  Notes notes;
  std::vector<TableItem> items = t.items;
  if (t.items_from_sweep) {
    items.clear();
    for (const auto& p : run.plan->points) {
      items.push_back({p.label, p.label, t.row});
    }
  }
  std::vector<std::string> header = {"Target", t.items_from_sweep ? s.sweep_title : "Workload"};
  std::vector<bool> right = {false, false};
  for (const auto& c : t.columns) {
    header.push_back(c.title);
    right.push_back(true);
  }
  MarkdownTable table(header, right);
  b.header = header;
  for (size_t ti = 0; ti < run.targets.size(); ++ti) {
    const Target& target = run.targets[ti];
    for (size_t i = 0; i < items.size(); ++i) {
      const TableItem& item = items[i];
      std::vector<std::string> cells = {i == 0 ? target.name + " (this machine)" : "", item.label};
      const auto reps = measurementsOf(run.measurements, item.point, target.name);
      const auto first = measurementsOf(run.measurements, item.point, run.targets[0].name);
      for (const auto& c : t.columns) {
        const std::string& row = c.row.empty() ? item.row : c.row;
        cells.push_back(ourCell(reps, first, ti == 0, row, c.metric, &notes,
                                item.label + " × " + target.name, !metricInfo(c.metric).per_point));
        if (auto spread = spreadValue(reps, row, c.metric)) {
          b.spreads.push_back({target.name, item.label, row, c.metric, std::move(*spread)});
        }
      }
      table.addRow(cells);
      b.rows.push_back(cells);
    }
  }
  // Published rows, aligned by item (sweep items: by the point's place in the full sweep).
  auto publishedAt = [&](const PublishedSeries& pub, size_t item,
                         size_t column) -> std::optional<double> {
    size_t at = item;
    if (t.items_from_sweep) {
      auto i = seedIndex(s, items[item].point);
      if (!i) {
        return std::nullopt;
      }
      at = *i;
    }
    if (at >= pub.cells.size() || column >= pub.cells[at].size()) {
      return std::nullopt;
    }
    return pub.cells[at][column];
  };
  for (const auto& pub : t.published) {
    for (size_t i = 0; i < items.size(); ++i) {
      std::vector<std::string> cells = {i == 0 ? "seed: " + pub.name : "", items[i].label};
      for (size_t c = 0; c < t.columns.size(); ++c) {
        cells.push_back(publishedCell(publishedAt(pub, i, c), t.columns[c].metric));
      }
      table.addRow(cells);
      b.rows.push_back(cells);
    }
  }
  b.markdown = table.render();
  const std::string footnotes = notes.render();
  if (!footnotes.empty()) {
    b.markdown += "\n" + footnotes;
  }
  for (size_t ci = 0; ci < t.charts.size(); ++ci) {
    const ChartSpec& spec = t.charts[ci];
    const TableColumn& col = t.columns[std::min(spec.column, t.columns.size() - 1)];
    ChartData chart;
    chart.title = scaleTitle(columnChartTitle(col.title, t.items_from_sweep ? s.sweep_title : ""),
                             run.plan->scale);
    // The table's title, which may name columns this chart does not draw, as a reference only.
    chart.subtitle = "a column of the table \u201c" + t.title + "\u201d; " + chartSubtitle(run);
    chart.published_source = s.seed_file;
    chart.x_title = t.items_from_sweep ? s.sweep_title : "";
    chart.y_title = col.title;
    for (const auto& item : items) {
      chart.x_labels.push_back(item.label);
    }
    for (const auto& target : run.targets) {
      ChartSeries series;
      series.name = target.name + " (this machine)";
      for (const auto& item : items) {
        const auto reps = measurementsOf(run.measurements, item.point, target.name);
        const auto spread = spreadValue(reps, col.row.empty() ? item.row : col.row, col.metric);
        series.values.push_back(spread ? std::optional<double>(spread->median) : std::nullopt);
        series.ranges.push_back(rangeOf(spread));
      }
      chart.series.push_back(std::move(series));
    }
    for (const auto& pub : t.published) {
      if (!drawn(t, pub.name)) {
        continue;
      }
      ChartSeries series;
      series.name = "seed: " + pub.name;
      series.reference = true;
      bool any = false;
      for (size_t i = 0; i < items.size(); ++i) {
        series.values.push_back(publishedAt(pub, i, spec.column));
        any = any || series.values.back().has_value();
      }
      if (any) {
        chart.series.push_back(std::move(series));
      }
    }
    const std::string file = std::to_string(index + 1) + "-" + slugify(col.title) + ".svg";
    b.charts.emplace_back(scaleFileName(file, run.plan->scale), spec.kind == ChartSpec::Kind::kBar
                                                                    ? barChartSvg(chart)
                                                                    : lineChartSvg(chart));
  }
  return b;
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) {
    return text;
  }
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') {
      out += "\"\"";
    } else {
      out += c == '\n' ? ' ' : c;
    }
  }
  return out + "\"";
}

std::string csvNumber(std::optional<double> v, int decimals) {
  return v ? formatValue(v, decimals) : "";
}

std::string buildCsv(const ScenarioRun& run) {
  std::string out =
      "scenario,scale,point,target,rep,status,row,ops,qps,kb_per_sec,avg_ms,p50_ms,p90_ms,p99_ms,"
      "p999_ms,p9999_ms,max_ms,hits,misses,errors,connections,connected_clients,"
      "proxy_rss_kb_before,proxy_rss_kb_peak,shard_memory_bytes,message\n";
  for (const auto& m : run.measurements) {
    std::vector<const RowSummary*> rows;
    for (const auto& r : m.rows) {
      rows.push_back(&r);
    }
    if (rows.empty()) {
      rows.push_back(nullptr);
    }
    for (const RowSummary* r : rows) {
      std::vector<std::string> f = {
          run.scenario->name, run.plan->scale,           m.point,
          m.target,           std::to_string(m.rep + 1), std::string(statusName(m.status)),
          r ? r->name : ""};
      if (r != nullptr) {
        f.insert(f.end(),
                 {std::to_string(r->ops), formatValue(r->qps, 2), formatValue(r->kb_per_sec, 2),
                  formatValue(r->avg_ns / 1e6, 5), formatValue(r->p50_ns / 1e6, 5),
                  formatValue(r->p90_ns / 1e6, 5), formatValue(r->p99_ns / 1e6, 5),
                  formatValue(r->p999_ns / 1e6, 5), formatValue(r->p9999_ns / 1e6, 5),
                  formatValue(r->max_ns / 1e6, 5), std::to_string(r->hits),
                  std::to_string(r->misses), std::to_string(r->errors)});
      } else {
        f.insert(f.end(), 13, "");
      }
      f.insert(f.end(), {std::to_string(m.connections), csvNumber(m.connected_clients_peak, 0),
                         csvNumber(m.proxy_rss_kb_before, 0), csvNumber(m.proxy_rss_kb_peak, 0),
                         csvNumber(m.shard_memory_bytes, 0), m.message});
      for (size_t i = 0; i < f.size(); ++i) {
        if (i > 0) {
          out += ',';
        }
        out += csvField(f[i]);
      }
      out += '\n';
    }
  }
  return out;
}

void machineJson(JsonWriter& j, const MachineInfo& m) {
  j.key("machine").beginObject();
  j.field("nproc", static_cast<uint64_t>(m.nproc));
  j.field("cpu_model", m.cpu_model);
  j.field("mem_total_kb", m.mem_total_kb);
  j.field("mem_available_kb", m.mem_available_kb);
  j.field("kernel", m.kernel);
  j.field("open_files", m.open_files);
  j.field("date_utc", m.date_utc);
  j.endObject();
}

void measurementJson(JsonWriter& j, const Measurement& m) {
  j.beginObject();
  j.field("point", m.point).field("target", m.target).field("rep", m.rep + 1);
  j.field("status", std::string(statusName(m.status))).field("message", m.message);
  j.field("wall_s", m.wall_s, 3).field("connections", m.connections);
  j.field("connected_clients_peak", m.connected_clients_peak, 0);
  j.field("proxy_rss_kb_before", m.proxy_rss_kb_before, 0);
  j.field("proxy_rss_kb_peak", m.proxy_rss_kb_peak, 0);
  j.field("shard_memory_bytes", m.shard_memory_bytes, 0);
  j.key("commands").beginArray();
  for (const auto& c : m.commands) {
    j.value(c);
  }
  j.endArray();
  j.key("rows").beginArray();
  for (const auto& r : m.rows) {
    j.beginObject();
    j.field("row", r.name).field("ops", r.ops).field("qps", r.qps, 2);
    j.field("kb_per_sec", r.kb_per_sec, 2);
    j.field("avg_ms", r.avg_ns / 1e6, 5).field("p50_ms", r.p50_ns / 1e6, 5);
    j.field("p90_ms", r.p90_ns / 1e6, 5).field("p99_ms", r.p99_ns / 1e6, 5);
    j.field("p999_ms", r.p999_ns / 1e6, 5).field("p9999_ms", r.p9999_ns / 1e6, 5);
    j.field("max_ms", r.max_ns / 1e6, 5);
    j.field("hits", r.hits).field("misses", r.misses).field("errors", r.errors);
    j.endObject();
  }
  j.endArray();
  j.endObject();
}

}  // namespace

std::string ratioText(const Spread& value, const Spread& base) {
  const std::string ratio = formatRatio(value.median / base.median);
  return compareSpreads(value, base) == Verdict::kWithinNoise ? "within noise, " + ratio : ratio;
}

std::vector<const Measurement*> measurementsOf(const std::vector<Measurement>& all,
                                               const std::string& point,
                                               const std::string& target) {
  std::vector<const Measurement*> out;
  for (const auto& m : all) {
    if (m.point == point && m.target == target) {
      out.push_back(&m);
    }
  }
  return out;
}

bool writeScenarioReport(const ScenarioRun& run, const std::string& dir, std::string* markdown,
                         std::string* error) {
  const Scenario& s = *run.scenario;
  const ScenarioPlan& plan = *run.plan;
  std::vector<Built> tables;
  for (size_t i = 0; i < s.tables.size(); ++i) {
    tables.push_back(s.tables[i].rows_layout ? buildRowsTable(run, s.tables[i], i)
                                             : buildColumnsTable(run, s.tables[i], i));
  }

  // report.md
  std::string md = "# " + scaleTitle(s.title, plan.scale) + "\n\n";
  md += "Reproduces `" + s.seed_file + "`, " + s.seed_section + ".\n\n";
  md += "- **scenario**: `" + s.path + "`, scale `" + plan.scale + "`" +
        (run.repeat > 1 ? ", " + std::to_string(run.repeat) + " repetitions (median)" : "") + "\n";
  md += "- **repetitions**: " + std::to_string(run.repeat) +
        (run.repeat > 1
             ? " per point and target; a cell shows the median and (min\u2013max) of its "
               "repetitions, the charts draw the range as whiskers, and a ratio is a difference "
               "only when the two ranges do not overlap (otherwise: within noise)\n"
             : ": no min\u2013max spread, so ratios are not tested against noise (--repeat N)\n");
  md += "- **command**: `" + run.command_line + "`\n";
  md += "- **targets**: ";
  for (size_t i = 0; i < run.targets.size(); ++i) {
    md += (i ? ", " : "") + run.targets[i].name + " = " + run.targets[i].endpoint.text();
  }
  md += run.targets.size() > 1 ? " (ratios are to " + run.targets[0].name + ")\n" : "\n";
  if (!run.deployment.empty()) {
    md += "- **started locally**: " + run.deployment + "\n";
  }
  md += machineMarkdown(run.machine);
  md += cpuBudgetMarkdown(run.cpu_budget);
  char wall[64];
  std::snprintf(wall, sizeof(wall), "%.0f s", run.wall_s);
  md += std::string("- **wall time**: ") + wall + (run.interrupted ? " (interrupted)" : "") + "\n";
  if (!s.seed_command.empty()) {
    md += "- **seed command**: `" + s.seed_command + "`\n";
  }
  for (const auto& [title, value] : plan.report_vars) {
    md += "- **" + title + "**: " + value + "\n";
  }
  if (plan.memory_estimate_bytes) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.0f MB",
                  static_cast<double>(*plan.memory_estimate_bytes) / 1048576.0);
    md += std::string("- **memory estimate**: ") + buf + " of shard memory\n";
  }
  for (const auto& w : run.warnings) {
    md += "- **warning**: " + w + "\n";
  }
  if (!s.notes.empty()) {
    md += "\n> " + s.notes + "\n";
  }
  for (size_t i = 0; i < s.tables.size(); ++i) {
    md += "\n## " + scaleTitle(s.tables[i].title, plan.scale) + "\n\n" + tables[i].markdown;
    for (const auto& [file, svg] : tables[i].charts) {
      md += "\n![" + s.tables[i].title + "](" + file + ")\n";
    }
  }
  md += "\n## Runs\n\n";
  MarkdownTable runs({"point", "target", "rep", "status", "wall (s)", "shardbench command"},
                     {false, false, true, false, true, false});
  for (const auto& m : run.measurements) {
    std::string cmds;
    for (const auto& c : m.commands) {
      if (!cmds.empty()) {
        cmds += " & ";
      }
      cmds += "`" + c + "`";
    }
    std::string status(statusName(m.status));
    if (!m.message.empty() && m.status != MeasureStatus::kOk) {
      status += ": " + m.message.substr(0, 300);
    }
    runs.addRow(
        {m.point, m.target, std::to_string(m.rep + 1), status, formatValue(m.wall_s, 1), cmds});
  }
  md += runs.render();

  // results.json
  JsonWriter j;
  j.beginObject();
  j.field("tool", "shardbench").field("kind", "scenario").field("format", 1);
  j.field("version", SHARDPROXY_VERSION);
  j.key("scenario").beginObject();
  j.field("name", s.name).field("title", s.title).field("file", s.path);
  j.field("seed_file", s.seed_file).field("seed_section", s.seed_section);
  j.field("seed_command", s.seed_command);
  j.endObject();
  j.field("scale", plan.scale).field("command_line", run.command_line);
  j.field("repeat", run.repeat).field("wall_s", run.wall_s, 1);
  j.field("interrupted", run.interrupted).field("deployment", run.deployment);
  machineJson(j, run.machine);
  cpuBudgetJson(j, run.cpu_budget);
  j.key("vars").beginObject();
  for (const auto& [k, v] : plan.vars) {
    j.field(k, v);
  }
  j.endObject();
  j.key("warnings").beginArray();
  for (const auto& w : run.warnings) {
    j.value(w);
  }
  j.endArray();
  j.key("targets").beginArray();
  for (const auto& t : run.targets) {
    j.beginObject().field("name", t.name).field("address", t.endpoint.text());
    j.field("local", t.local).endObject();
  }
  j.endArray();
  j.key("points").beginArray();
  for (const auto& p : plan.points) {
    j.beginObject().field("label", p.label).field("connections", p.connections);
    j.field("skip_reason", p.skip_reason).field("added_to_fit", p.added_to_fit);
    j.key("runs").beginArray();
    for (const auto& r : p.runs) {
      std::string args;
      for (const auto& a : r.args) {
        args += (args.empty() ? "" : " ") + a;
      }
      j.beginObject().field("name", r.name).field("args", args).endObject();
    }
    j.endArray().endObject();
  }
  j.endArray();
  j.key("measurements").beginArray();
  for (const auto& m : run.measurements) {
    measurementJson(j, m);
  }
  j.endArray();
  j.key("tables").beginArray();
  for (size_t i = 0; i < tables.size(); ++i) {
    j.beginObject().field("title", s.tables[i].title);
    j.key("header").beginArray();
    for (const auto& h : tables[i].header) {
      j.value(h);
    }
    j.endArray();
    j.key("rows").beginArray();
    for (const auto& row : tables[i].rows) {
      j.beginArray();
      for (const auto& c : row) {
        j.value(c);
      }
      j.endArray();
    }
    j.endArray();
    j.key("charts").beginArray();
    for (const auto& [file, svg] : tables[i].charts) {
      j.value(file);
    }
    j.endArray();
    // The numbers behind our cells: every repetition's value, the median and the min–max.
    j.key("spreads").beginArray();
    for (const auto& c : tables[i].spreads) {
      j.beginObject().field("target", c.target).field("item", c.item).field("row", c.row);
      j.field("metric", std::string(metricInfo(c.metric).name));
      j.field("median", c.spread.median, 5).field("min", c.spread.min, 5);
      j.field("max", c.spread.max, 5);
      j.key("values").beginArray();
      for (double v : c.spread.values) {
        j.value(v, 5);
      }
      j.endArray().endObject();
    }
    j.endArray().endObject();
  }
  j.endArray();
  j.endObject();

  if (!writeFile(dir + "/report.md", md, error) ||
      !writeFile(dir + "/results.json", j.text(), error) ||
      !writeFile(dir + "/results.csv", buildCsv(run), error)) {
    return false;
  }
  for (const auto& t : tables) {
    for (const auto& [file, svg] : t.charts) {
      if (!writeFile(dir + "/" + file, svg, error)) {
        return false;
      }
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir + "/runs", ec);
  for (const auto& m : run.measurements) {
    for (const auto& [name, record] : m.records) {
      std::string file = dir + "/runs/" + slugify(m.point) + "--" + slugify(m.target) + "--r" +
                         std::to_string(m.rep + 1);
      if (!name.empty()) {
        file += "--" + slugify(name);
      }
      if (!writeFile(file + ".json", toJson(record), error)) {
        return false;
      }
    }
  }
  *markdown = std::move(md);
  return true;
}

}  // namespace sp::bench
