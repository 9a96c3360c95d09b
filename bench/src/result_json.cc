// Writing and reading result files.
#include "result_json.h"

#include "json.h"
#include "percentile_table.h"

namespace sp::bench {
namespace {

constexpr int kFormat = 1;

void key(std::string& out, std::string_view k) {
  appendJsonString(out, k);
  out += ": ";
}

void u64(std::string& out, std::string_view k, uint64_t v) {
  key(out, k);
  out += std::to_string(v);
}

void num(std::string& out, std::string_view k, double v, int decimals = 3) {
  key(out, k);
  appendJsonNumber(out, v, decimals);
}

void rowJson(std::string& out, const RowResult& r, const std::vector<double>& percentiles) {
  const CommandStats& s = r.stats;
  const LatencyHistogram& h = s.latency;
  out += "        {";
  key(out, "type");
  appendJsonString(out, r.type);
  out += ", \"has_hits\": ";
  out += r.has_hits ? "true" : "false";
  out += ", ";
  u64(out, "ops", s.ops);
  out += ", ";
  u64(out, "hits", s.hits);
  out += ", ";
  u64(out, "misses", s.misses);
  out += ", ";
  u64(out, "bytes_tx", s.bytes_tx);
  out += ", ";
  u64(out, "bytes_rx", s.bytes_rx);
  out += ",\n         ";
  num(out, "ops_per_sec", r.ops_per_sec, 2);
  out += ", ";
  num(out, "hits_per_sec", r.hits_per_sec, 2);
  out += ", ";
  num(out, "misses_per_sec", r.misses_per_sec, 2);
  out += ", ";
  num(out, "kb_per_sec", r.kb_per_sec, 2);
  out += ",\n         \"latency_ms\": {";
  num(out, "avg", toMs(h.mean()), 5);
  out += ", ";
  num(out, "min", toMs(static_cast<double>(h.min())), 5);
  const std::pair<const char*, double> quantiles[] = {
      {"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99.9", 99.9}, {"p99.99", 99.99}};
  for (const auto& [name, q] : quantiles) {
    out += ", ";
    num(out, name, toMs(static_cast<double>(h.percentile(q))), 5);
  }
  out += ", ";
  num(out, "max", toMs(static_cast<double>(h.max())), 5);
  out += "},";
  if (!percentiles.empty()) {
    out += "\n         \"percentiles_ms\": {";
    for (size_t i = 0; i < percentiles.size(); ++i) {
      out += i ? ", " : "";
      num(out, percentileLabel(percentiles[i]),
          toMs(static_cast<double>(h.percentile(percentiles[i]))), 5);
    }
    out += "},";
  }
  out += "\n         \"errors\": {";
  bool first = true;
  for (const auto& e : s.errors.entries()) {
    out += first ? "" : ", ";
    first = false;
    u64(out, e.kind, e.count);
  }
  out += "}, \"error_examples\": {";
  first = true;
  for (const auto& e : s.errors.entries()) {
    out += first ? "" : ", ";
    first = false;
    key(out, e.kind);
    appendJsonString(out, e.example);
  }
  out += "},\n         \"histogram\": {\"unit\": \"ns\", ";
  u64(out, "sub_bucket_bits", LatencyHistogram::kSubBucketBits);
  out += ", ";
  u64(out, "count", h.count());
  out += ", ";
  u64(out, "min", h.min());
  out += ", ";
  u64(out, "max", h.max());
  out += ", ";
  u64(out, "sum", h.sum());
  out += ", \"buckets\": [";
  first = true;
  const auto& b = h.buckets();
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] == 0) {
      continue;
    }
    out += first ? "" : ", ";
    first = false;
    out += '[';
    out += std::to_string(i);
    out += ", ";
    out += std::to_string(b[i]);
    out += ']';
  }
  out += "]}}";
}

}  // namespace

std::string toJson(const RunRecord& run) {
  std::string out = "{\n  \"tool\": \"shardbench\", ";
  u64(out, "format", kFormat);
  out += ", \"version\": ";
  appendJsonString(out, SHARDPROXY_VERSION);
  out += ",\n  \"command_line\": ";
  appendJsonString(out, run.command_line);
  out += ",\n  \"target\": ";
  appendJsonString(out, run.target);
  out += ",\n  \"description\": ";
  appendJsonString(out, run.summary.description);
  out += ",\n  \"sources\": [";
  for (size_t i = 0; i < run.sources.size(); ++i) {
    out += i ? ", " : "";
    appendJsonString(out, run.sources[i]);
  }
  out += "],\n  \"connections\": {";
  u64(out, "opened", run.summary.connections);
  out += ", ";
  u64(out, "reconnects", run.summary.reconnects);
  out += ", ";
  u64(out, "closed_by_server", run.summary.closed_by_server);
  const TlsSummary& tls = run.summary.tls;
  out += "},\n  \"tls\": {\"enabled\": ";
  out += tls.enabled ? "true" : "false";
  out += ", \"verify\": ";
  out += tls.verify ? "true" : "false";
  out += ", \"client_cert\": ";
  out += tls.client_cert ? "true" : "false";
  out += ", \"protocol\": ";
  appendJsonString(out, tls.protocol);
  out += ", \"cipher\": ";
  appendJsonString(out, tls.cipher);
  out += "},\n  \"verify\": {\"enabled\": ";
  out += run.summary.verify ? "true" : "false";
  out += ", ";
  u64(out, "mismatches", run.summary.verify_mismatches);
  out += ", ";
  u64(out, "unverified", run.summary.verify_unverified);
  out += ", ";
  u64(out, "lost", run.summary.verify_lost);
  out += ", \"messages\": [";
  for (size_t i = 0; i < run.summary.verify_messages.size(); ++i) {
    out += i ? ", " : "";
    appendJsonString(out, run.summary.verify_messages[i]);
  }
  out += "]},\n  \"phases\": [\n";
  for (size_t p = 0; p < run.phases.size(); ++p) {
    const PhaseResult& ph = run.phases[p];
    out += "    {\"name\": ";
    appendJsonString(out, ph.name);
    out += ", ";
    num(out, "duration_s", ph.duration_s, 6);
    out += ", \"totals_row\": ";
    out += ph.totals_row ? "true" : "false";
    out += ", \"interrupted\": ";
    out += ph.interrupted ? "true" : "false";
    out += ",\n      \"rows\": [\n";
    for (size_t r = 0; r < ph.rows.size(); ++r) {
      rowJson(out, ph.rows[r], run.percentiles);
      out += r + 1 < ph.rows.size() ? ",\n" : "\n";
    }
    out += "      ]}";
    out += p + 1 < run.phases.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

bool fromJson(std::string_view text, RunRecord* out, std::string* error) {
  JsonValue doc;
  if (!JsonValue::parse(text, &doc, error)) {
    *error = "invalid JSON: " + *error;
    return false;
  }
  if (doc["tool"].asString() != "shardbench" || doc["format"].asU64() != kFormat) {
    *error = "not a shardbench result file (format " + std::to_string(kFormat) + ")";
    return false;
  }
  RunRecord run;
  run.command_line = doc["command_line"].asString();
  run.target = doc["target"].asString();
  run.summary.description = doc["description"].asString();
  for (const auto& s : doc["sources"].elements()) {
    run.sources.push_back(s.asString());
  }
  run.summary.connections = doc["connections"]["opened"].asU64();
  run.summary.reconnects = doc["connections"]["reconnects"].asU64();
  run.summary.closed_by_server = doc["connections"]["closed_by_server"].asU64();
  const JsonValue& tls = doc["tls"];  // absent in older files: plain TCP
  run.summary.tls.enabled = tls["enabled"].asBool();
  run.summary.tls.verify = tls["verify"].asBool();
  run.summary.tls.client_cert = tls["client_cert"].asBool();
  run.summary.tls.protocol = tls["protocol"].asString();
  run.summary.tls.cipher = tls["cipher"].asString();
  run.summary.verify = doc["verify"]["enabled"].asBool();
  run.summary.verify_mismatches = doc["verify"]["mismatches"].asU64();
  run.summary.verify_unverified = doc["verify"]["unverified"].asU64();
  run.summary.verify_lost = doc["verify"]["lost"].asU64();  // absent in older files: 0
  for (const auto& m : doc["verify"]["messages"].elements()) {
    run.summary.verify_messages.push_back(m.asString());
  }
  for (const auto& p : doc["phases"].elements()) {
    PhaseResult ph;
    ph.name = p["name"].asString();
    ph.duration_s = p["duration_s"].asDouble();
    ph.totals_row = p["totals_row"].asBool();
    ph.interrupted = p["interrupted"].asBool();
    for (const auto& r : p["rows"].elements()) {
      RowResult row;
      row.type = r["type"].asString();
      row.has_hits = r["has_hits"].asBool();
      row.stats.ops = r["ops"].asU64();
      row.stats.hits = r["hits"].asU64();
      row.stats.misses = r["misses"].asU64();
      row.stats.bytes_tx = r["bytes_tx"].asU64();
      row.stats.bytes_rx = r["bytes_rx"].asU64();
      row.ops_per_sec = r["ops_per_sec"].asDouble();
      row.hits_per_sec = r["hits_per_sec"].asDouble();
      row.misses_per_sec = r["misses_per_sec"].asDouble();
      row.kb_per_sec = r["kb_per_sec"].asDouble();
      for (const auto& [kind, count] : r["errors"].members()) {
        row.stats.errors.add(kind, count.asU64(), r["error_examples"][kind].asString());
      }
      const JsonValue& h = r["histogram"];
      if (h["sub_bucket_bits"].asU64() != LatencyHistogram::kSubBucketBits) {
        *error = "histogram of row '" + row.type + "' has another bucket layout";
        return false;
      }
      for (const auto& b : h["buckets"].elements()) {
        if (!b.isArray() || b.size() != 2 ||
            !row.stats.latency.addToBucket(b[0].asU64(UINT64_MAX), b[1].asU64())) {
          *error = "bad histogram bucket in row '" + row.type + "'";
          return false;
        }
      }
      if (row.stats.latency.count() != h["count"].asU64()) {
        *error = "histogram of row '" + row.type + "' does not add up to its count";
        return false;
      }
      row.stats.latency.restoreExtremes(h["min"].asU64(), h["max"].asU64(), h["sum"].asU64());
      ph.rows.push_back(std::move(row));
    }
    run.phases.push_back(std::move(ph));
  }
  *out = std::move(run);
  return true;
}

}  // namespace sp::bench
