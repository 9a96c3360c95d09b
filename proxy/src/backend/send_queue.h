// The stall watch's readings of a backend socket, taken only where a write backs up and at the
// timer's checks (never per request):
// - how many bytes the kernel still holds for the shard: written by us, not yet acknowledged
//   (SIOCOUTQ), to see a shard still taking the tail of a large request whose write libuv has
//   already completed;
// - the time now (net::Timers::freshNowMs), not the loop's cached time: a write backs up after a
//   large request was parsed and copied in the same loop turn, which may take seconds in a
//   sanitizer build, and a clock started at the turn's beginning would count that time as the
//   shard's silence.
#pragma once

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>

#include "backend/stall_watch.h"

namespace sp::backend {

inline size_t kernelSendQueue(const uv_handle_t* socket) {
  uv_os_fd_t fd = -1;
  int queued = 0;
  if (uv_fileno(socket, &fd) != 0 || ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) {
    return StallWatch::kUnknown;
  }
  return static_cast<size_t>(queued);
}

}  // namespace sp::backend
