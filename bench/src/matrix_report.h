// The result directory of `shardbench matrix`: report.md (SET and GET tables laid out like the
// seed's, rows = shards, columns = proxy workers, the seed's number beside ours where it ran the
// same cell, then the seed's published tables), heat maps
// (matrix-set.svg, matrix-get.svg and the seed's), results.json, results.csv and runs/*.json.
// At the quick scale the titles say "(quick smoke test, not a measurement)" and our heat maps are
// matrix-set-quick.svg and matrix-get-quick.svg (see scale_label.h). Repeated cells show their
// median with the min–max range, and no cell is called the best while another's range overlaps
// its own. Every output states the CPU budget of the run.
#pragma once

#include <string>
#include <vector>

#include "cpu_budget.h"
#include "machine_info.h"
#include "measurement.h"
#include "spread.h"

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
  int repeat = 1;                              // repetitions per cell (--repeat)
  CpuBudget cpu_budget;
  std::string load_args;  // the shardbench flags of every cell
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

// The cell with the highest median requests/s of `row` ("SET", "GET"), and the other cells whose
// min–max range overlaps its own: those it is not called better than.
struct BestCell {
  const MatrixCell* cell = nullptr;
  Spread spread;
  std::vector<const MatrixCell*> within_noise;
  bool tested = true;  // false: the best or another cell has one repetition (no spread)
};
BestCell bestCell(const MatrixRun& run, const std::string& row);
// "best SET: 1234 (1200–1300) requests/s at 4 shards × 2 workers, ahead of every other cell
// beyond the min–max ranges", or "highest SET median: ...; within noise of 2×1, 4×1 (their
// min–max ranges overlap)", or, with one repetition, that no spread was measured.
std::string bestCellText(const BestCell& best, const std::string& row);

// The seed's published SET and GET tables (2..64 proxy cores x 2/4/8/16 shards).
struct SeedMatrix {
  std::vector<int> cores;
  std::vector<int> shards;
  std::vector<std::vector<double>> set;  // [shard row][core column]
  std::vector<std::vector<double>> get;
};
const SeedMatrix& seedMatrix();

}  // namespace sp::bench
