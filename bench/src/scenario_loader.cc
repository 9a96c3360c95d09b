// Scenario files: YAML (yaml-cpp) into the Scenario structs. yaml-cpp's exceptions stay in this
// file; every problem is collected with its YAML path and reported together.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "scenario.h"

namespace sp::bench {
namespace {

class Loader {
 public:
  explicit Loader(Scenario* out) : s_(*out) {}

  void load(const YAML::Node& root);
  std::string errors() const {
    std::string text;
    for (const auto& e : errors_) {
      if (!text.empty()) {
        text += '\n';
      }
      text += e;
    }
    return text;
  }
  bool ok() const { return errors_.empty(); }

 private:
  void error(const std::string& path, const std::string& message) {
    errors_.push_back(s_.path + ": " + path + ": " + message);
  }
  // Reports keys of a map that are not in `known`.
  void onlyKeys(const YAML::Node& node, const std::string& path,
                std::initializer_list<std::string_view> known) {
    if (!node.IsMap()) {
      error(path, "expected a map");
      return;
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      bool found = false;
      for (auto k : known) {
        found = found || key == k;
      }
      if (!found) {
        std::string list;
        for (auto k : known) {
          if (!list.empty()) {
            list += ", ";
          }
          list += k;
        }
        error(path.empty() ? key : path + "." + key, "unknown key (known: " + list + ")");
      }
    }
  }
  std::string str(const YAML::Node& node, const std::string& path, bool required = false) {
    if (!node) {
      if (required) {
        error(path, "missing");
      }
      return "";
    }
    if (!node.IsScalar()) {
      error(path, "expected a string");
      return "";
    }
    return node.as<std::string>();
  }
  bool boolean(const YAML::Node& node, const std::string& path) {
    if (!node) {
      return false;
    }
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      error(path, "expected true or false");
      return false;
    }
  }
  void vars(const YAML::Node& node, const std::string& path, VarMap* out) {
    if (!node) {
      return;
    }
    if (!node.IsMap()) {
      error(path, "expected a map of names to values");
      return;
    }
    for (const auto& kv : node) {
      const std::string name = kv.first.as<std::string>();
      (*out)[name] = str(kv.second, path + "." + name);
    }
  }
  std::optional<Metric> metric(const YAML::Node& node, const std::string& path) {
    const std::string name = str(node, path, true);
    if (name.empty()) {
      return std::nullopt;
    }
    auto m = parseMetric(name);
    if (!m) {
      error(path, "unknown metric '" + name + "' (known: " + metricNames() + ")");
    }
    return m;
  }
  std::optional<double> number(const YAML::Node& node, const std::string& path) {
    if (!node || node.IsNull()) {
      return std::nullopt;
    }
    if (node.IsScalar() && (node.as<std::string>() == "-" || node.as<std::string>().empty())) {
      return std::nullopt;
    }
    try {
      return node.as<double>();
    } catch (const YAML::Exception&) {
      error(path, "expected a number (or null for none)");
      return std::nullopt;
    }
  }

  void seed(const YAML::Node& node);
  void sweep(const YAML::Node& node);
  void points(const YAML::Node& node);
  void scales(const YAML::Node& node);
  void table(const YAML::Node& node, const std::string& path, TableSpec* t);
  void published(const YAML::Node& node, const std::string& path, TableSpec* t);

  Scenario& s_;
  std::vector<std::string> errors_;
};

void Loader::load(const YAML::Node& root) {
  onlyKeys(root, "",
           {"name", "title", "seed", "args", "stateful", "local_shards", "vars", "sweep", "points",
            "scales", "memory_estimate", "report_vars", "measure", "tables"});
  if (!root.IsMap()) {
    return;
  }
  s_.name = str(root["name"], "name", true);
  s_.title = str(root["title"], "title", true);
  seed(root["seed"]);
  s_.args = str(root["args"], "args");
  s_.stateful = boolean(root["stateful"], "stateful");
  if (root["local_shards"]) {
    try {
      s_.local_shards = root["local_shards"].as<int>();
    } catch (const YAML::Exception&) {
      s_.local_shards = 0;
    }
    if (s_.local_shards < 1 || s_.local_shards > 64) {
      error("local_shards", "expected a shard count from 1 to 64");
    }
  }
  vars(root["vars"], "vars", &s_.vars);
  if (root["sweep"] && root["points"]) {
    error("sweep", "give either sweep or points, not both");
  } else if (root["sweep"]) {
    sweep(root["sweep"]);
  } else if (root["points"]) {
    points(root["points"]);
  } else {
    error("points", "missing (or a sweep)");
  }
  scales(root["scales"]);
  s_.memory_estimate = str(root["memory_estimate"], "memory_estimate");
  if (const auto rv = root["report_vars"]) {
    if (!rv.IsSequence()) {
      error("report_vars", "expected a list of {title, value}");
    } else {
      for (size_t i = 0; i < rv.size(); ++i) {
        const std::string p = "report_vars[" + std::to_string(i) + "]";
        onlyKeys(rv[i], p, {"title", "value"});
        if (rv[i].IsMap()) {
          s_.report_vars.emplace_back(str(rv[i]["title"], p + ".title", true),
                                      str(rv[i]["value"], p + ".value", true));
        }
      }
    }
  }
  if (const auto m = root["measure"]) {
    onlyKeys(m, "measure", {"proxy_rss", "info_clients", "shard_memory"});
    s_.measure_proxy_rss = boolean(m["proxy_rss"], "measure.proxy_rss");
    s_.measure_info_clients = boolean(m["info_clients"], "measure.info_clients");
    s_.measure_shard_memory = boolean(m["shard_memory"], "measure.shard_memory");
  }
  const auto tables = root["tables"];
  if (!tables || !tables.IsSequence() || tables.size() == 0) {
    error("tables", "expected a non-empty list");
  } else {
    for (size_t i = 0; i < tables.size(); ++i) {
      TableSpec t;
      table(tables[i], "tables[" + std::to_string(i) + "]", &t);
      s_.tables.push_back(std::move(t));
    }
  }
}

void Loader::seed(const YAML::Node& node) {
  if (!node) {
    error("seed", "missing: name the seed file and section this scenario reproduces");
    return;
  }
  onlyKeys(node, "seed", {"file", "section", "command", "notes"});
  if (!node.IsMap()) {
    return;
  }
  s_.seed_file = str(node["file"], "seed.file", true);
  s_.seed_section = str(node["section"], "seed.section", true);
  s_.seed_command = str(node["command"], "seed.command");
  s_.notes = str(node["notes"], "seed.notes");
}

void Loader::sweep(const YAML::Node& node) {
  onlyKeys(node, "sweep", {"title", "args", "values", "fit_open_files"});
  if (!node.IsMap()) {
    return;
  }
  s_.has_sweep = true;
  s_.sweep_title = str(node["title"], "sweep.title", true);
  const std::string args = str(node["args"], "sweep.args", true);
  s_.fit_open_files = boolean(node["fit_open_files"], "sweep.fit_open_files");
  const auto values = node["values"];
  if (!values || !values.IsSequence() || values.size() == 0) {
    error("sweep.values", "expected a non-empty list");
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string v = str(values[i], "sweep.values[" + std::to_string(i) + "]", true);
    if (!seen.insert(v).second) {
      error("sweep.values[" + std::to_string(i) + "]", "duplicate value '" + v + "'");
    }
    PointSpec p;
    p.label = v;
    p.runs.push_back({"", args});
    p.vars["value"] = v;
    s_.points.push_back(std::move(p));
  }
}

void Loader::points(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0) {
    error("points", "expected a non-empty list");
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = "points[" + std::to_string(i) + "]";
    const auto n = node[i];
    onlyKeys(n, path, {"name", "args", "runs"});
    if (!n.IsMap()) {
      continue;
    }
    PointSpec p;
    p.label = str(n["name"], path + ".name", true);
    if (!seen.insert(p.label).second) {
      error(path + ".name", "duplicate point '" + p.label + "'");
    }
    if (n["args"] && n["runs"]) {
      error(path, "give args or runs, not both");
    } else if (n["runs"]) {
      const auto runs = n["runs"];
      if (!runs.IsSequence() || runs.size() == 0) {
        error(path + ".runs", "expected a non-empty list of {name, args}");
      } else {
        std::set<std::string> names;
        for (size_t r = 0; r < runs.size(); ++r) {
          const std::string rp = path + ".runs[" + std::to_string(r) + "]";
          onlyKeys(runs[r], rp, {"name", "args"});
          if (!runs[r].IsMap()) {
            continue;
          }
          RunSpec run{str(runs[r]["name"], rp + ".name", true),
                      str(runs[r]["args"], rp + ".args", true)};
          if (!names.insert(run.name).second) {
            error(rp + ".name", "duplicate run '" + run.name + "'");
          }
          p.runs.push_back(std::move(run));
        }
      }
    } else {
      p.runs.push_back({"", str(n["args"], path + ".args", true)});
    }
    s_.points.push_back(std::move(p));
  }
}

void Loader::scales(const YAML::Node& node) {
  if (!node || !node.IsMap()) {
    error("scales", "expected a map with quick and full");
    return;
  }
  onlyKeys(node, "scales", {"quick", "full"});
  for (const char* name : {"quick", "full"}) {
    const std::string path = std::string("scales.") + name;
    const auto n = node[name];
    if (!n) {
      error(path, "missing");
      continue;
    }
    ScaleSpec sc;
    if (!n.IsNull()) {
      onlyKeys(n, path, {"values", "args", "point_args", "vars"});
      if (!n.IsMap()) {
        continue;
      }
      if (const auto v = n["values"]) {
        if (!v.IsSequence()) {
          error(path + ".values", "expected a list of point labels");
        } else {
          for (size_t i = 0; i < v.size(); ++i) {
            const std::string label = str(v[i], path + ".values[" + std::to_string(i) + "]");
            if (s_.point(label) == nullptr) {
              error(path + ".values[" + std::to_string(i) + "]", "no point '" + label + "'");
            }
            sc.values.push_back(label);
          }
        }
      }
      sc.args = str(n["args"], path + ".args");
      if (const auto pa = n["point_args"]) {
        if (!pa.IsMap()) {
          error(path + ".point_args", "expected a map of point label to args");
        } else {
          for (const auto& kv : pa) {
            const std::string label = kv.first.as<std::string>();
            if (s_.point(label) == nullptr) {
              error(path + ".point_args." + label, "no point '" + label + "'");
            }
            sc.point_args.emplace_back(label, str(kv.second, path + ".point_args." + label));
          }
        }
      }
      vars(n["vars"], path + ".vars", &sc.vars);
    }
    s_.scales.emplace_back(name, std::move(sc));
  }
}

void Loader::table(const YAML::Node& node, const std::string& path, TableSpec* t) {
  onlyKeys(node, path,
           {"title", "layout", "row", "metric", "items", "columns", "chart", "charts",
            "chart_published", "published"});
  if (!node.IsMap()) {
    return;
  }
  t->title = str(node["title"], path + ".title", true);
  const std::string layout = node["layout"] ? str(node["layout"], path + ".layout") : "columns";
  if (layout != "columns" && layout != "rows") {
    error(path + ".layout", "expected columns (points are columns) or rows (items are rows)");
  }
  t->rows_layout = layout == "rows";
  if (!t->rows_layout) {
    if (!s_.has_sweep) {
      error(path + ".layout", "the columns layout needs a sweep; use layout: rows with items");
    }
    t->row = str(node["row"], path + ".row", true);
    if (auto m = metric(node["metric"], path + ".metric")) {
      t->metric = *m;
    }
    if (node["items"] || node["columns"]) {
      error(path, "items and columns belong to layout: rows");
    }
  } else {
    const auto items = node["items"];
    if (items && items.IsScalar() && items.as<std::string>() == "sweep") {
      if (!s_.has_sweep) {
        error(path + ".items", "items: sweep needs a sweep");
      }
      t->items_from_sweep = true;
      t->row = str(node["row"], path + ".row", true);
      for (const auto& p : s_.points) {
        t->items.push_back({p.label, p.label, t->row});
      }
    } else if (!items || !items.IsSequence() || items.size() == 0) {
      error(path + ".items", "expected a list of {label, point, row} or 'sweep'");
    } else {
      if (node["row"]) {
        error(path + ".row", "with an items list each item names its row");
      }
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string ip = path + ".items[" + std::to_string(i) + "]";
        onlyKeys(items[i], ip, {"label", "point", "row"});
        if (!items[i].IsMap()) {
          continue;
        }
        TableItem item{str(items[i]["label"], ip + ".label", true),
                       str(items[i]["point"], ip + ".point", true),
                       str(items[i]["row"], ip + ".row", true)};
        if (!item.point.empty() && s_.point(item.point) == nullptr) {
          error(ip + ".point", "no point '" + item.point + "'");
        }
        t->items.push_back(std::move(item));
      }
    }
    const auto cols = node["columns"];
    if (!cols || !cols.IsSequence() || cols.size() == 0) {
      error(path + ".columns", "expected a list of {title, metric[, row]}");
    } else {
      for (size_t i = 0; i < cols.size(); ++i) {
        const std::string cp = path + ".columns[" + std::to_string(i) + "]";
        onlyKeys(cols[i], cp, {"title", "metric", "row"});
        if (!cols[i].IsMap()) {
          continue;
        }
        TableColumn c;
        c.title = str(cols[i]["title"], cp + ".title", true);
        if (auto m = metric(cols[i]["metric"], cp + ".metric")) {
          c.metric = *m;
        }
        c.row = str(cols[i]["row"], cp + ".row");
        t->columns.push_back(std::move(c));
      }
    }
    if (node["metric"]) {
      error(path + ".metric", "a rows-layout table names a metric per column");
    }
  }
  auto chart = [&](const YAML::Node& n, const std::string& cp) {
    ChartSpec c;
    c.kind =
        t->rows_layout && !t->items_from_sweep ? ChartSpec::Kind::kBar : ChartSpec::Kind::kLine;
    onlyKeys(n, cp, {"kind", "column"});
    if (!n.IsMap()) {
      return;
    }
    if (n["kind"]) {
      const std::string kind = str(n["kind"], cp + ".kind");
      if (kind == "line") {
        c.kind = ChartSpec::Kind::kLine;
      } else if (kind == "bar") {
        c.kind = ChartSpec::Kind::kBar;
      } else {
        error(cp + ".kind", "expected line or bar");
      }
    }
    if (n["column"]) {
      try {
        c.column = n["column"].as<size_t>();
      } catch (const YAML::Exception&) {
        error(cp + ".column", "expected a column index");
      }
      if (!t->rows_layout) {
        error(cp + ".column", "only rows-layout tables choose a column");
      } else if (c.column >= t->columns.size()) {
        error(cp + ".column", "no column " + std::to_string(c.column));
      }
    }
    t->charts.push_back(c);
  };
  if (node["chart"] && node["charts"]) {
    error(path + ".chart", "give chart or charts, not both");
  } else if (node["chart"]) {
    if (!(node["chart"].IsScalar() && node["chart"].as<std::string>() == "none")) {
      chart(node["chart"], path + ".chart");
    }
  } else if (node["charts"]) {
    const auto cs = node["charts"];
    if (!cs.IsSequence()) {
      error(path + ".charts", "expected a list");
    } else {
      for (size_t i = 0; i < cs.size(); ++i) {
        chart(cs[i], path + ".charts[" + std::to_string(i) + "]");
      }
    }
  } else {
    ChartSpec c;
    c.kind =
        t->rows_layout && !t->items_from_sweep ? ChartSpec::Kind::kBar : ChartSpec::Kind::kLine;
    t->charts.push_back(c);
  }
  published(node["published"], path + ".published", t);
  if (const auto cp = node["chart_published"]) {
    if (!cp.IsSequence()) {
      error(path + ".chart_published", "expected a list of published series names");
    } else {
      for (size_t i = 0; i < cp.size(); ++i) {
        const std::string name = str(cp[i], path + ".chart_published[" + std::to_string(i) + "]");
        bool found = false;
        for (const auto& p : t->published) {
          found = found || p.name == name;
        }
        if (!found) {
          error(path + ".chart_published[" + std::to_string(i) + "]",
                "no published series '" + name + "'");
        }
        t->chart_published.push_back(name);
      }
    }
  }
}

void Loader::published(const YAML::Node& node, const std::string& path, TableSpec* t) {
  if (!node) {
    return;
  }
  if (!node.IsMap()) {
    error(path, "expected a map of series name to values");
    return;
  }
  for (const auto& kv : node) {
    PublishedSeries series;
    series.name = kv.first.as<std::string>();
    const std::string sp = path + "." + series.name;
    const auto v = kv.second;
    if (!v.IsSequence()) {
      error(sp, "expected a list");
      continue;
    }
    if (!t->rows_layout) {
      if (v.size() != s_.points.size()) {
        error(sp, std::to_string(v.size()) + " values for " + std::to_string(s_.points.size()) +
                      " points (use null where the seed has no number)");
      }
      std::vector<std::optional<double>> row;
      for (size_t i = 0; i < v.size(); ++i) {
        row.push_back(number(v[i], sp + "[" + std::to_string(i) + "]"));
      }
      series.cells.push_back(std::move(row));
    } else {
      if (v.size() != t->items.size()) {
        error(sp,
              std::to_string(v.size()) + " rows for " + std::to_string(t->items.size()) + " items");
      }
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string ip = sp + "[" + std::to_string(i) + "]";
        std::vector<std::optional<double>> row;
        if (!v[i].IsSequence()) {
          error(ip, "expected a list of values, one per column");
        } else {
          if (v[i].size() > t->columns.size()) {
            error(ip, std::to_string(v[i].size()) + " values for " +
                          std::to_string(t->columns.size()) + " columns");
          }
          for (size_t c = 0; c < v[i].size(); ++c) {
            row.push_back(number(v[i][c], ip + "[" + std::to_string(c) + "]"));
          }
        }
        row.resize(t->columns.size());
        series.cells.push_back(std::move(row));
      }
    }
    t->published.push_back(std::move(series));
  }
}

}  // namespace

const ScaleSpec* Scenario::scale(std::string_view scale_name) const {
  for (const auto& [n, s] : scales) {
    if (n == scale_name) {
      return &s;
    }
  }
  return nullptr;
}

const PointSpec* Scenario::point(std::string_view label) const {
  for (const auto& p : points) {
    if (p.label == label) {
      return &p;
    }
  }
  return nullptr;
}

bool parseScenario(std::string_view yaml_text, const std::string& path, Scenario* out,
                   std::string* error) {
  Scenario s;
  s.path = path;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  Loader loader(&s);
  try {
    loader.load(root);
  } catch (const YAML::Exception& e) {
    *error = path + ": " + e.what();
    return false;
  }
  if (!loader.ok()) {
    *error = loader.errors();
    return false;
  }
  *out = std::move(s);
  return true;
}

bool loadScenario(const std::string& path, Scenario* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read scenario file " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parseScenario(ss.str(), path, out, error);
}

}  // namespace sp::bench
