// The standard Prometheus process metrics (process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds), read from /proc/self at scrape time, as the official client
// libraries export them.
#pragma once

#include "metrics/family_set.h"

namespace sp::metrics {

void collectProcessMetrics(FamilySet* out);

}  // namespace sp::metrics
