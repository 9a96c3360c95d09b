// LogSink: where every log line goes. stderr (the journal under systemd) or a file appended to,
// reopened on request (SIGUSR1, after logrotate has moved it). Lines at warn level and above are
// limited to a number per second over the whole process, so a flood of failures cannot fill the
// disk or drown the journal; what was dropped is counted in one line when the next second starts.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

#include "core/status.h"

namespace sp {

class LogSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  using Clock = std::function<uint64_t()>;  // milliseconds, monotonic

  // `path` empty: stderr. warn_per_second: warn, error and critical lines kept per second.
  LogSink(std::string path, uint32_t warn_per_second, Clock clock);
  ~LogSink() override;
  LogSink(const LogSink&) = delete;
  LogSink& operator=(const LogSink&) = delete;

  // Opens the file (created 0640 when missing); a sink that failed to open writes to stderr.
  Status open();
  // Closes and opens the file again by its path; stderr: nothing to do. On failure the old file
  // stays in use.
  Status reopen();
  uint64_t suppressed();

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  Status openLocked();
  void write(const spdlog::memory_buf_t& line);

  std::string path_;
  uint32_t warn_per_second_;
  Clock clock_;
  FILE* file_ = nullptr;  // nullptr: stderr
  uint64_t window_start_ms_ = 0;
  uint32_t warn_in_window_ = 0;
  uint64_t dropped_in_window_ = 0;
  uint64_t suppressed_ = 0;
};

// Installs a LogSink as the default logger's only sink (before other threads start): `path`
// empty logs to stderr. Fails when the file cannot be opened.
Status configureLogging(const std::string& path);
// SIGUSR1: reopens the log file (no-op on stderr).
Status reopenLogFile();

}  // namespace sp
