// Interrupt: one SIGINT/SIGTERM handler for every subcommand. It sets a flag that the runner polls
// (so a run stops and prints its partial report) and sends SIGTERM to every child process that
// matrix and scenario runs registered (redis-server shards, proxies), so Ctrl-C never leaves a
// server behind; a second Ctrl-C sends SIGKILL. Everything the handler touches is a lock-free
// atomic, so it is async-signal-safe.
#pragma once

#include <sys/types.h>

namespace sp::bench {

// Installs the handler (idempotent) and ignores SIGPIPE.
void installInterruptHandler();
bool interruptRequested();
// For tests and for callers that want to stop a run themselves.
void requestInterrupt();
void clearInterrupt();

// Child PIDs the handler signals. register returns false when the table is full (the caller then
// still owns and stops the child; only Ctrl-C coverage is lost).
bool registerChild(pid_t pid);
void unregisterChild(pid_t pid);

}  // namespace sp::bench
