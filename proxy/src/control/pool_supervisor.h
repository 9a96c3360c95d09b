// PoolSupervisor: serves every pool of a nutcracker.yml, as nutcracker does from one process, by
// running one shardproxy per pool: this binary again with --pool NAME and a metrics port of its
// own (the base port plus the pool's index in the file). The supervisor passes SIGTERM, SIGINT,
// SIGHUP and SIGUSR1 on to every pool; when a pool's process exits by itself, it stops the
// others and exits 1, so that the service manager restarts the set. Under systemd it alone
// speaks to the service manager: READY once every pool accepts connections, WATCHDOG while
// every pool runs.
#pragma once

#include <string>
#include <vector>

#include "config/loader.h"

namespace sp::control {

// Runs the pools until a signal stops them; returns the process exit status. Every pool's
// configuration is loaded and checked first: any error is printed and nothing starts (2).
int superviseTwemproxyPools(const config::CommandLine& cmdline,
                            const std::vector<std::string>& pools);

}  // namespace sp::control
