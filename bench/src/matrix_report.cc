// Matrix tables, heat maps and result files.
#include "matrix_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

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

std::vector<const Measurement*> repsOf(const MatrixCell& cell) {
  std::vector<const Measurement*> out;
  for (const auto& m : cell.reps) {
    out.push_back(&m);
  }
  return out;
}

// The failure of a cell whose repetitions all failed ("" when one succeeded).
std::string cellFailure(const MatrixCell& cell) {
  std::string message;
  for (const auto& m : cell.reps) {
    if (m.status == MeasureStatus::kOk) {
      return "";
    }
    message = m.message;
  }
  return cell.reps.empty() ? "not run" : message;
}

std::string cellName(const MatrixCell& cell) {
  return std::to_string(cell.shards) + " shards \u00d7 " + std::to_string(cell.workers) +
         " workers";
}

std::optional<ValueRange> rangeOf(const std::optional<Spread>& s) {
  if (!s || !s->measured()) {
    return std::nullopt;
  }
  return ValueRange{s->min, s->max};
}

// The CPUs the proxy may use: those of --proxy-cpus, or all of them. More workers than that is
// oversubscribed (†).
unsigned proxyCpuCount(const MatrixRun& run) {
  return run.cpu_budget.proxy.empty() ? run.machine.nproc
                                      : static_cast<unsigned>(run.cpu_budget.proxy.size());
}

std::string workerLabel(int workers, unsigned cpus) {
  return std::to_string(workers) + (static_cast<unsigned>(workers) > cpus ? " †" : "");
}

std::string shardLabel(int shards) { return std::to_string(shards) + " shards"; }

struct Footnotes {
  std::vector<std::string> lines;
  std::string mark(const std::string& where, const std::string& message) {
    lines.push_back(where + ": " + message);
    return "[" + std::to_string(lines.size()) + "]";
  }
};

// The seed's number for (shards, proxy cores = workers), when the seed has that cell.
std::optional<double> seedValue(const std::vector<std::vector<double>>& values, int shards,
                                int workers) {
  const SeedMatrix& seed = seedMatrix();
  const auto r = std::find(seed.shards.begin(), seed.shards.end(), shards);
  const auto c = std::find(seed.cores.begin(), seed.cores.end(), workers);
  if (r == seed.shards.end() || c == seed.cores.end()) {
    return std::nullopt;
  }
  return values[static_cast<size_t>(r - seed.shards.begin())]
               [static_cast<size_t>(c - seed.cores.begin())];
}

// Our cells, with the seed's published number beside ours where the seed has the same shards
// and as many proxy cores as we ran workers.
std::string ourTable(const MatrixRun& run, const std::string& row,
                     const std::vector<std::vector<double>>& seed_values, Footnotes* notes) {
  std::vector<std::string> header = {"Proxy workers"};
  std::vector<bool> right = {false};
  for (int w : run.workers) {
    header.push_back(workerLabel(w, proxyCpuCount(run)));
    right.push_back(true);
  }
  MarkdownTable t(header, right);
  for (size_t r = 0; r < run.shards.size(); ++r) {
    std::vector<std::string> cells = {shardLabel(run.shards[r])};
    for (size_t c = 0; c < run.workers.size(); ++c) {
      const MatrixCell& cell = run.cells[r][c];
      const std::string failure = cellFailure(cell);
      if (!failure.empty()) {
        cells.push_back(failure == "not run"
                            ? "not run"
                            : "failed " + notes->mark(std::to_string(cell.shards) + " shards × " +
                                                          std::to_string(cell.workers) + " workers",
                                                      failure));
        continue;
      }
      std::string text = formatSpread(spreadValue(repsOf(cell), row, Metric::kQps), 0);
      if (const auto seed = seedValue(seed_values, cell.shards, cell.workers)) {
        text += " (seed " + formatValue(*seed, 0) + ")";
      }
      cells.push_back(text);
    }
    t.addRow(cells);
  }
  return t.render();
}

std::string seedTable(const std::vector<std::vector<double>>& values) {
  const SeedMatrix& seed = seedMatrix();
  std::vector<std::string> header = {"Proxy cores (seed)"};
  std::vector<bool> right = {false};
  for (int c : seed.cores) {
    header.push_back(std::to_string(c));
    right.push_back(true);
  }
  MarkdownTable t(header, right);
  for (size_t r = 0; r < seed.shards.size(); ++r) {
    std::vector<std::string> cells = {shardLabel(seed.shards[r])};
    for (double v : values[r]) {
      cells.push_back(formatValue(v, 0));
    }
    t.addRow(cells);
  }
  return t.render();
}

HeatMapData ourHeatMap(const MatrixRun& run, const std::string& row, const std::string& op) {
  HeatMapData h;
  h.title =
      scaleTitle(op + " requests per second: shards × proxy workers (this machine)", run.scale);
  h.subtitle =
      std::to_string(run.machine.nproc) + " CPUs (nproc); † more workers than " +
      (run.cpu_budget.proxy.empty() ? std::string("CPUs; ")
                                    : "the proxy's " + std::to_string(proxyCpuCount(run)) + "; ");
  const BestCell best = bestCell(run, row);
  if (run.repeat > 1) {
    h.subtitle += "median of " + std::to_string(run.repeat) + " runs";
    if (best.tested && !best.within_noise.empty()) {
      h.subtitle += ", \u2248 best: min\u2013max overlaps the best cell's";
    }
    h.subtitle += "; ";
  }
  h.subtitle += run.load_args + "\nCPU budget: " + run.cpu_budget.text();
  h.row_title = "shards";
  h.col_title = "proxy workers";
  h.legend = "requests/s";
  for (int w : run.workers) {
    h.cols.push_back(workerLabel(w, proxyCpuCount(run)));
  }
  for (size_t r = 0; r < run.shards.size(); ++r) {
    h.rows.push_back(shardLabel(run.shards[r]));
    std::vector<std::optional<double>> values;
    std::vector<std::optional<ValueRange>> ranges;
    std::vector<std::string> notes;
    for (size_t c = 0; c < run.workers.size(); ++c) {
      const MatrixCell& cell = run.cells[r][c];
      const std::string failure = cellFailure(cell);
      const auto spread =
          failure.empty() ? spreadValue(repsOf(cell), row, Metric::kQps) : std::nullopt;
      values.push_back(spread ? std::optional<double>(spread->median) : std::nullopt);
      ranges.push_back(rangeOf(spread));
      std::string note;
      if (!failure.empty()) {
        note = failure == "not run" ? "not run" : "failed";
      } else {
        // The best cell and, when its spread was measured, those within noise of it.
        if (best.tested && best.cell == &cell && run.repeat > 1) {
          note = "best";
        } else if (best.tested && std::find(best.within_noise.begin(), best.within_noise.end(),
                                            &cell) != best.within_noise.end()) {
          note = "\u2248 best";
        }
        if (static_cast<unsigned>(run.workers[c]) > proxyCpuCount(run)) {
          note += std::string(note.empty() ? "" : ", ") +
                  (run.cpu_budget.proxy.empty() ? "† > nproc" : "† > proxy CPUs");
        }
      }
      notes.push_back(note);
    }
    h.values.push_back(std::move(values));
    h.ranges.push_back(std::move(ranges));
    h.notes.push_back(std::move(notes));
  }
  return h;
}

HeatMapData seedHeatMap(const std::vector<std::vector<double>>& values, const std::string& op) {
  const SeedMatrix& seed = seedMatrix();
  HeatMapData h;
  h.title = op + " requests per second: shards × proxy cores (seed, published)";
  h.subtitle =
      std::string(
          "000_c339298947676b8e.txt: redis-benchmark -t set,get -d 256 --threads 32 -c 960 "
          "-n 10000000 -r 10000; ") +
      kPublishedCaption;
  h.row_title = "shards";
  h.col_title = "proxy cores";
  h.legend = "requests/s";
  for (int c : seed.cores) {
    h.cols.push_back(std::to_string(c));
  }
  for (size_t r = 0; r < seed.shards.size(); ++r) {
    h.rows.push_back(shardLabel(seed.shards[r]));
    std::vector<std::optional<double>> row;
    for (double v : values[r]) {
      row.push_back(v);
    }
    h.values.push_back(std::move(row));
  }
  return h;
}

}  // namespace

BestCell bestCell(const MatrixRun& run, const std::string& row) {
  BestCell best;
  std::vector<std::pair<const MatrixCell*, Spread>> measured;
  for (const auto& cells : run.cells) {
    for (const auto& cell : cells) {
      if (auto s = spreadValue(repsOf(cell), row, Metric::kQps)) {
        measured.emplace_back(&cell, std::move(*s));
      }
    }
  }
  for (const auto& [cell, spread] : measured) {
    if (best.cell == nullptr || spread.median > best.spread.median) {
      best.cell = cell;
      best.spread = spread;
    }
  }
  for (const auto& [cell, spread] : measured) {
    if (cell == best.cell) {
      continue;
    }
    const Verdict v = compareSpreads(best.spread, spread);
    if (v == Verdict::kUntested) {
      best.tested = false;
    } else if (v == Verdict::kWithinNoise) {
      best.within_noise.push_back(cell);
    }
  }
  if (!best.spread.measured()) {
    best.tested = false;
  }
  return best;
}

std::string bestCellText(const BestCell& best, const std::string& row) {
  if (best.cell == nullptr) {
    return "";
  }
  const std::string at = formatSpread(best.spread, 0) + " requests/s at " + cellName(*best.cell);
  if (!best.tested) {
    return "highest " + row + ": " + at +
           " (one repetition of some cells: no min\u2013max spread, so no cell is called better "
           "than another; use --repeat)";
  }
  if (best.within_noise.empty()) {
    return "best " + row + ": " + at + ", ahead of every other cell beyond the min\u2013max ranges";
  }
  std::string others;
  for (const MatrixCell* c : best.within_noise) {
    others += (others.empty() ? "" : ", ") + std::to_string(c->shards) + "\u00d7" +
              std::to_string(c->workers);
  }
  return "highest " + row + " median: " + at + "; within noise of " + others +
         " (shards\u00d7workers; their min\u2013max ranges overlap)";
}

const SeedMatrix& seedMatrix() {
  static const SeedMatrix seed = {
      {2, 4, 8, 16, 32, 64},
      {2, 4, 8, 16},
      {{217244, 386701, 415299, 469241, 520450, 521247},
       {236501, 369329, 501356, 504464, 518645, 537521},
       {235122, 379518, 514412, 527475, 546298, 539025},
       {224202, 385131, 561829, 577600, 675904, 712301}},
      {{188469, 311075, 395238, 391144, 492053, 587406},
       {189257, 329973, 504884, 491908, 491859, 553863},
       {189082, 326085, 566544, 588657, 602831, 605202},
       {178275, 329793, 569800, 587302, 756636, 797257}},
  };
  return seed;
}

bool writeMatrixReport(const MatrixRun& run, const std::string& dir, std::string* markdown,
                       std::string* error) {
  const SeedMatrix& seed = seedMatrix();
  Footnotes notes;
  const std::string set_chart = scaleFileName("matrix-set.svg", run.scale);
  const std::string get_chart = scaleFileName("matrix-get.svg", run.scale);
  std::string md =
      "# " + scaleTitle("Proxy workers × shards: SET and GET requests per second", run.scale) +
      "\n\n";
  md +=
      "Reproduces `000_c339298947676b8e.txt`, Kiểm thử hiệu năng Proxy (the distributed "
      "edition's proxy: 2/4/8/16 shards × 2..64 proxy cores).\n\n";
  md += "- **command**: `" + run.command_line + "`\n";
  md += "- **every cell**: `shardbench " + run.load_args + "`\n";
  if (!run.deployment.empty()) {
    md += "- **servers**: " + run.deployment + "\n";
  }
  md += machineMarkdown(run.machine);
  md += "- **repetitions**: " + std::to_string(run.repeat) +
        (run.repeat > 1 ? " per cell; a cell shows the median and (min\u2013max) of its "
                          "repetitions, and is called better than another only when their "
                          "ranges do not overlap\n"
                        : " per cell: no min\u2013max spread, so no cell is called better than "
                          "another (--repeat N)\n");
  md += cpuBudgetMarkdown(run.cpu_budget);
  char wall[64];
  std::snprintf(wall, sizeof(wall), "%.0f s", run.wall_s);
  md += std::string("- **wall time**: ") + wall + (run.interrupted ? " (interrupted)" : "") + "\n";
  md +=
      "- **seed command**: `redis-benchmark -h IP -t set,get -d 256 --threads 32 -c 960 -n "
      "10000000 -r 10000` (32-core client; proxy cores 2..64; 6 GB shards)\n";
  for (const auto& w : run.warnings) {
    md += "- **warning**: " + w + "\n";
  }
  md += "\n> nproc here is " + std::to_string(run.machine.nproc) +
        ": columns marked † have more proxy workers than " +
        (run.cpu_budget.proxy.empty()
             ? std::string("CPUs")
             : "the proxy's CPUs (" + std::to_string(proxyCpuCount(run)) + ", --proxy-cpus)") +
        ", and " +
        (run.cpu_budget.pinned() ? std::string("the client, the proxy and the shards ran on the "
                                               "CPUs of the CPU budget above")
                                 : std::string("the client, the proxy and the shards share "
                                               "those CPUs")) +
        ", so compare cells with each other, not with the seed's "
        "32-core numbers. A cell whose shard count and worker count the seed also ran (as "
        "proxy cores) shows the seed's number in brackets.\n";
  md += "\n## " + scaleTitle("SET requests per second (Hiệu năng Set)", run.scale) + "\n\n" +
        ourTable(run, "SET", seed.set, &notes);
  if (const BestCell best = bestCell(run, "SET"); best.cell != nullptr) {
    md += "\n" + bestCellText(best, "SET") + ".\n";
  }
  md += "\n![SET heat map](" + set_chart + ")\n";
  md += "\n## " + scaleTitle("GET requests per second (Hiệu năng Get)", run.scale) + "\n\n" +
        ourTable(run, "GET", seed.get, &notes);
  if (const BestCell best = bestCell(run, "GET"); best.cell != nullptr) {
    md += "\n" + bestCellText(best, "GET") + ".\n";
  }
  md += "\n![GET heat map](" + get_chart + ")\n";
  if (!notes.lines.empty()) {
    md += "\n";
    for (size_t i = 0; i < notes.lines.size(); ++i) {
      md += "- [" + std::to_string(i + 1) + "] " + notes.lines[i] + "\n";
    }
  }
  md += "\n## Seed: SET requests per second (" + std::string(kPublishedCaption) + ")\n\n" +
        seedTable(seed.set);
  md += "\n## Seed: GET requests per second (" + std::string(kPublishedCaption) + ")\n\n" +
        seedTable(seed.get);
  md += "\n![seed SET heat map](seed-set.svg) ![seed GET heat map](seed-get.svg)\n";
  md += "\n## Cells\n\n";
  MarkdownTable cells({"shards", "workers", "rep", "status", "SET/s", "GET/s", "SET p99 (ms)",
                       "GET p99 (ms)", "wall (s)", "proxy"},
                      {true, true, true, false, true, true, true, true, true, false});
  for (const auto& row : run.cells) {
    for (const auto& cell : row) {
      for (const auto& m : cell.reps) {
        std::string status(statusName(m.status));
        if (m.status != MeasureStatus::kOk) {
          status += ": " + m.message.substr(0, 300);
        }
        cells.addRow({std::to_string(cell.shards), std::to_string(cell.workers),
                      std::to_string(m.rep + 1), status,
                      formatValue(metricValue(m, "SET", Metric::kQps), 0),
                      formatValue(metricValue(m, "GET", Metric::kQps), 0),
                      formatValue(metricValue(m, "SET", Metric::kP99Ms), 3),
                      formatValue(metricValue(m, "GET", Metric::kP99Ms), 3),
                      formatValue(m.wall_s, 1), cell.address});
      }
    }
  }
  md += cells.render();

  JsonWriter j;
  j.beginObject();
  j.field("tool", "shardbench").field("kind", "matrix").field("format", 1);
  j.field("version", SHARDPROXY_VERSION).field("command_line", run.command_line);
  j.field("scale", run.scale).field("repeat", run.repeat);
  cpuBudgetJson(j, run.cpu_budget);
  j.field("load_args", run.load_args).field("deployment", run.deployment);
  j.field("wall_s", run.wall_s, 1).field("interrupted", run.interrupted);
  j.field("nproc", static_cast<uint64_t>(run.machine.nproc));
  j.field("cpu_model", run.machine.cpu_model).field("date_utc", run.machine.date_utc);
  j.key("warnings").beginArray();
  for (const auto& w : run.warnings) {
    j.value(w);
  }
  j.endArray();
  j.key("shards").beginArray();
  for (int s : run.shards) {
    j.value(s);
  }
  j.endArray().key("workers").beginArray();
  for (int w : run.workers) {
    j.value(w);
  }
  j.endArray().key("cells").beginArray();
  std::string csv =
      "shards,workers,oversubscribed,status,set_qps,get_qps,set_avg_ms,get_avg_ms,set_p99_ms,"
      "get_p99_ms,set_qps_min,set_qps_max,get_qps_min,get_qps_max,reps,message\n";
  for (const auto& row : run.cells) {
    for (const auto& cell : row) {
      const auto reps = repsOf(cell);
      const std::string failure = cellFailure(cell);
      const bool over = static_cast<unsigned>(cell.workers) > proxyCpuCount(run);
      const std::string status = failure.empty()        ? "ok"
                                 : failure == "not run" ? "not run"
                                                        : "failed";
      j.beginObject().field("shards", cell.shards).field("workers", cell.workers);
      j.field("oversubscribed", over).field("status", status).field("message", failure);
      j.field("address", cell.address);
      // Medians, with the min and max of the repetitions beside them ("reps" has every value).
      const auto set = spreadValue(reps, "SET", Metric::kQps);
      const auto get = spreadValue(reps, "GET", Metric::kQps);
      j.field("set_qps", medianValue(reps, "SET", Metric::kQps), 2);
      j.field("set_qps_min", set ? std::optional<double>(set->min) : std::nullopt, 2);
      j.field("set_qps_max", set ? std::optional<double>(set->max) : std::nullopt, 2);
      j.field("get_qps", medianValue(reps, "GET", Metric::kQps), 2);
      j.field("get_qps_min", get ? std::optional<double>(get->min) : std::nullopt, 2);
      j.field("get_qps_max", get ? std::optional<double>(get->max) : std::nullopt, 2);
      j.field("set_p99_ms", medianValue(reps, "SET", Metric::kP99Ms), 4);
      j.field("get_p99_ms", medianValue(reps, "GET", Metric::kP99Ms), 4);
      j.key("reps").beginArray();
      for (const auto& m : cell.reps) {
        j.beginObject().field("rep", m.rep + 1).field("status", std::string(statusName(m.status)));
        j.field("message", m.message).field("wall_s", m.wall_s, 2);
        j.field("set_qps", metricValue(m, "SET", Metric::kQps), 2);
        j.field("get_qps", metricValue(m, "GET", Metric::kQps), 2);
        j.field("set_p99_ms", metricValue(m, "SET", Metric::kP99Ms), 4);
        j.field("get_p99_ms", metricValue(m, "GET", Metric::kP99Ms), 4);
        j.key("commands").beginArray();
        for (const auto& c : m.commands) {
          j.value(c);
        }
        j.endArray().endObject();
      }
      j.endArray().endObject();
      std::string message = failure;
      for (char& ch : message) {
        if (ch == ',' || ch == '\n' || ch == '"') {
          ch = ' ';
        }
      }
      csv += std::to_string(cell.shards) + "," + std::to_string(cell.workers) + "," +
             (over ? "1" : "0") + "," + status + "," +
             formatValue(medianValue(reps, "SET", Metric::kQps), 2) + "," +
             formatValue(medianValue(reps, "GET", Metric::kQps), 2) + "," +
             formatValue(medianValue(reps, "SET", Metric::kAvgMs), 4) + "," +
             formatValue(medianValue(reps, "GET", Metric::kAvgMs), 4) + "," +
             formatValue(medianValue(reps, "SET", Metric::kP99Ms), 4) + "," +
             formatValue(medianValue(reps, "GET", Metric::kP99Ms), 4) + "," +
             (set ? formatValue(set->min, 2) + "," + formatValue(set->max, 2) : ",") + "," +
             (get ? formatValue(get->min, 2) + "," + formatValue(get->max, 2) : ",") + "," +
             std::to_string(cell.reps.size()) + "," + message + "\n";
    }
  }
  j.endArray().endObject();

  if (!writeFile(dir + "/report.md", md, error) ||
      !writeFile(dir + "/results.json", j.text(), error) ||
      !writeFile(dir + "/results.csv", csv, error) ||
      !writeFile(dir + "/" + set_chart, heatMapSvg(ourHeatMap(run, "SET", "SET")), error) ||
      !writeFile(dir + "/" + get_chart, heatMapSvg(ourHeatMap(run, "GET", "GET")), error) ||
      !writeFile(dir + "/seed-set.svg", heatMapSvg(seedHeatMap(seed.set, "SET")), error) ||
      !writeFile(dir + "/seed-get.svg", heatMapSvg(seedHeatMap(seed.get, "GET")), error)) {
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir + "/runs", ec);
  for (const auto& row : run.cells) {
    for (const auto& cell : row) {
      for (const auto& m : cell.reps) {
        for (const auto& [name, record] : m.records) {
          const std::string file = dir + "/runs/" + std::to_string(cell.shards) + "shards-" +
                                   std::to_string(cell.workers) + "workers-r" +
                                   std::to_string(m.rep + 1) + ".json";
          if (!writeFile(file, toJson(record), error)) {
            return false;
          }
        }
      }
    }
  }
  *markdown = std::move(md);
  return true;
}

}  // namespace sp::bench
