// ServiceNotifier: the sd_notify messages a Type=notify unit receives (read here from a datagram
// socket named by NOTIFY_SOCKET, as systemd's), the watchdog interval taken from WATCHDOG_USEC,
// and keep-alives withheld while a worker is stuck or when there is no watchdog.
#include "control/service_notifier.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace sp::control {
namespace {

// A service manager's notify socket for the test's life: NOTIFY_SOCKET names it, and
// WATCHDOG_USEC is set when given.
class FakeServiceManager {
 public:
  explicit FakeServiceManager(const char* watchdog_usec = nullptr) {
    char dir[] = "/tmp/sp-notify-test-XXXXXX";
    if (::mkdtemp(dir) == nullptr) {
      return;
    }
    dir_ = dir;
    path_ = dir_ + "/notify";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return;
    }
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
    ::unsetenv("WATCHDOG_PID");
    if (watchdog_usec != nullptr) {
      ::setenv("WATCHDOG_USEC", watchdog_usec, 1);
    } else {
      ::unsetenv("WATCHDOG_USEC");
    }
  }
  ~FakeServiceManager() {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    if (fd_ >= 0) {
      ::close(fd_);
    }
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  FakeServiceManager(const FakeServiceManager&) = delete;
  FakeServiceManager& operator=(const FakeServiceManager&) = delete;

  bool listening() const { return std::getenv("NOTIFY_SOCKET") != nullptr; }
  // The next message already sent ("" when none is waiting).
  std::string next() const {
    char buf[512];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

TEST(ServiceNotifierTest, ReadyReloadingAndStoppingAreSentWithAStatus) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.listening());
  ServiceNotifier notifier;
  notifier.ready("serving 4 shards");
  EXPECT_EQ(manager.next(), "READY=1\nSTATUS=serving 4 shards");
  notifier.reloading();
  EXPECT_EQ(manager.next(), "RELOADING=1\nSTATUS=reloading");
  notifier.stopping();
  EXPECT_EQ(manager.next(), "STOPPING=1\nSTATUS=finishing in-flight requests");
  EXPECT_EQ(manager.next(), "");
}

TEST(ServiceNotifierTest, WithAWatchdogKeepAlivesComeAtHalfItsTimeoutWhileAlive) {
  FakeServiceManager manager("3000000");  // WatchdogSec=3
  ASSERT_TRUE(manager.listening());
  ServiceNotifier notifier;
  EXPECT_EQ(notifier.watchdogIntervalMs(), 1500u);
  notifier.watchdog(true);
  EXPECT_EQ(manager.next(), "WATCHDOG=1");
  notifier.watchdog(false);  // a stuck worker: the watchdog is left to fire
  EXPECT_EQ(manager.next(), "");
}

TEST(ServiceNotifierTest, WithoutAWatchdogNoKeepAliveIsSent) {
  FakeServiceManager manager;
  ASSERT_TRUE(manager.listening());
  ServiceNotifier notifier;
  EXPECT_EQ(notifier.watchdogIntervalMs(), 0u);
  notifier.watchdog(true);
  EXPECT_EQ(manager.next(), "");
}

TEST(ServiceNotifierTest, ATinyWatchdogTimeoutStillGivesAnInterval) {
  FakeServiceManager manager("1000");  // 1 ms: half is under a millisecond
  ASSERT_TRUE(manager.listening());
  EXPECT_EQ(ServiceNotifier().watchdogIntervalMs(), 1u);
}

}  // namespace
}  // namespace sp::control
