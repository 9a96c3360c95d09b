// The process-wide interrupt flag and the table of children to signal on Ctrl-C.
#include "interrupt.h"

#include <signal.h>

#include <atomic>

namespace sp::bench {
namespace {

constexpr int kMaxChildren = 256;

std::atomic<int> g_interrupts{0};
std::atomic<pid_t> g_children[kMaxChildren];
std::atomic<bool> g_installed{false};

void signalChildren(int sig) {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load(std::memory_order_relaxed);
    if (pid > 0) {
      ::kill(pid, sig);
    }
  }
}

void onSignal(int) {
  const int n = g_interrupts.fetch_add(1, std::memory_order_relaxed) + 1;
  signalChildren(n == 1 ? SIGTERM : SIGKILL);
}

}  // namespace

void installInterruptHandler() {
  if (g_installed.exchange(true)) {
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interruptRequested() { return g_interrupts.load(std::memory_order_relaxed) > 0; }

void requestInterrupt() { g_interrupts.fetch_add(1, std::memory_order_relaxed); }

void clearInterrupt() { g_interrupts.store(0, std::memory_order_relaxed); }

bool registerChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) {
      return true;
    }
  }
  return false;
}

void unregisterChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) {
      return;
    }
  }
}

}  // namespace sp::bench
