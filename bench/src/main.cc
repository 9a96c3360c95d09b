// shardbench: a load generator with the flags of redis-benchmark and memtier_benchmark.
// Subcommands: `shardbench [FLAGS]` runs a benchmark, `shardbench merge FILES` merges results,
// `shardbench matrix` measures the proxy-worker x shard matrix, `shardbench scenario FILE` runs a
// seed report's table.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "matrix_command.h"
#include "merge_command.h"
#include "options.h"
#include "runner.h"
#include "scenario_command.h"

namespace {

int runCommand(const std::vector<std::string>& args) {
  sp::bench::Options options;
  std::string error;
  if (!sp::bench::parseOptions(args, &options, &error)) {
    std::fprintf(stderr, "shardbench: %s\nRun 'shardbench --help' for the list of flags.\n",
                 error.c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(sp::bench::helpText().c_str(), stdout);
    return 0;
  }
  if (options.version) {
    std::printf("shardbench %s\n", SHARDPROXY_VERSION);
    return 0;
  }
  return sp::bench::runBenchmark(options);
}

struct Subcommand {
  std::string_view name;
  int (*run)(const std::vector<std::string>& args);
};

constexpr Subcommand kSubcommands[] = {
    {"merge", &sp::bench::runMerge},
    {"matrix", &sp::bench::runMatrixCommand},
    {"scenario", &sp::bench::runScenarioCommand},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty()) {
    for (const Subcommand& sub : kSubcommands) {
      if (args[0] == sub.name) {
        return sub.run(std::vector<std::string>(args.begin() + 1, args.end()));
      }
    }
  }
  return runCommand(args);
}
