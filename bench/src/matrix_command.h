// `shardbench matrix`: the headline table of 000_c339298947676b8e.txt ("Kiểm thử hiệu năng
// Proxy"): rows are shard counts, columns proxy worker counts, cells SET and GET requests per
// second of `-t set,get -d 256 -r 10000` with many connections. For every cell it starts the
// shards (once per row, flushed between cells) and the shardproxy of this build with that many
// workers, or it measures proxies that already run (--proxy). Cells with more workers than CPUs
// still run and are marked; a cell whose proxy does not start is reported as failed.
#pragma once

#include <string>
#include <vector>

namespace sp::bench {

// Exit status: 0 every cell measured, 1 a cell failed, 2 bad flags, 130 interrupted.
int runMatrixCommand(const std::vector<std::string>& args);

std::string matrixHelpText();

}  // namespace sp::bench
