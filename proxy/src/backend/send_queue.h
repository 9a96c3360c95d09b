// How many bytes the kernel still holds for a TCP peer: written by us, not yet acknowledged by
// the peer (SIOCOUTQ). The stall watch reads it at its timer checks (never per request) to see a
// shard still taking the tail of a large request whose write libuv has already completed.
#pragma once

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <uv.h>

#include <cstddef>

#include "backend/stall_watch.h"

namespace sp::backend {

inline size_t kernelSendQueue(const uv_tcp_t* tcp) {
  uv_os_fd_t fd = -1;
  int queued = 0;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(tcp), &fd) != 0 ||
      ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) {
    return StallWatch::kUnknown;
  }
  return static_cast<size_t>(queued);
}

}  // namespace sp::backend
