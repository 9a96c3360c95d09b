// The result directory of `shardbench matrix`: report.md (SET and GET tables laid out like the
// seed's, rows = shards, columns = proxy workers, the seed's number beside ours where it ran the
// same cell, then the seed's published tables), heat maps
// (matrix-set.svg, matrix-get.svg and the seed's), results.json, results.csv and runs/*.json.
// At the quick scale the titles say "(quick smoke test, not a measurement)" and our heat maps are
// matrix-set-quick.svg and matrix-get-quick.svg (see scale_label.h).
#pragma once

#include <string>
#include <vector>

#include "machine_info.h"
#include "measurement.h"

namespace sp::bench {

struct MatrixCell {
  int shards = 0;
  int workers = 0;
  std::string address;            // the proxy measured
  std::vector<Measurement> reps;  // empty: not run (interrupted)
};

struct MatrixRun {
  std::vector<int> shards;
  std::vector<int> workers;
  std::vector<std::vector<MatrixCell>> cells;  // [shard row][worker column]
  std::string scale;                           // "quick" or "full" (--scale)
  std::string load_args;                       // the shardbench flags of every cell
  std::string command_line;
  std::string deployment;
  MachineInfo machine;
  double wall_s = 0;
  bool interrupted = false;
  bool external = false;              // --proxy: the proxies were already running
  std::vector<std::string> warnings;  // e.g. warnings a cell's proxy logged
};

bool writeMatrixReport(const MatrixRun& run, const std::string& dir, std::string* markdown,
                       std::string* error);

// The seed's published SET and GET tables (2..64 proxy cores x 2/4/8/16 shards).
struct SeedMatrix {
  std::vector<int> cores;
  std::vector<int> shards;
  std::vector<std::vector<double>> set;  // [shard row][core column]
  std::vector<std::vector<double>> get;
};
const SeedMatrix& seedMatrix();

}  // namespace sp::bench
