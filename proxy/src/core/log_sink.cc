// LogSink (log_sink.h).
#include "core/log_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <spdlog/spdlog.h>

#include "core/clock.h"

namespace sp {
namespace {

constexpr uint32_t kWarnLinesPerSecond = 50;

std::shared_ptr<LogSink>& installed() {
  static std::shared_ptr<LogSink> sink;
  return sink;
}

}  // namespace

LogSink::LogSink(std::string path, uint32_t warn_per_second, Clock clock)
    : path_(std::move(path)), warn_per_second_(warn_per_second), clock_(std::move(clock)) {}

LogSink::~LogSink() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

Status LogSink::open() {
  std::lock_guard<std::mutex> lock(mutex_);
  return openLocked();
}

Status LogSink::reopen() {
  std::lock_guard<std::mutex> lock(mutex_);
  return openLocked();
}

Status LogSink::openLocked() {
  if (path_.empty()) {
    return Status();
  }
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  FILE* file = fd < 0 ? nullptr : ::fdopen(fd, "a");
  if (file == nullptr) {
    Status failed = Status::failure("log file " + path_ + ": " + std::strerror(errno));
    if (fd >= 0) {
      ::close(fd);
    }
    return failed;
  }
  std::setvbuf(file, nullptr, _IOLBF, 0);  // whole lines reach the file as they are logged
  if (file_ != nullptr) {
    std::fclose(file_);
  }
  file_ = file;
  return Status();
}

uint64_t LogSink::suppressed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return suppressed_;
}

void LogSink::write(const spdlog::memory_buf_t& line) {
  std::fwrite(line.data(), 1, line.size(), file_ != nullptr ? file_ : stderr);
}

void LogSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (msg.level >= spdlog::level::warn) {
    const uint64_t now = clock_();
    if (now - window_start_ms_ >= 1000) {
      if (dropped_in_window_ > 0) {
        const std::string text = std::to_string(dropped_in_window_) +
                                 " warning lines suppressed in the last second (at most " +
                                 std::to_string(warn_per_second_) + " per second)";
        const spdlog::details::log_msg note(msg.logger_name, spdlog::level::warn, text);
        spdlog::memory_buf_t line;
        formatter_->format(note, line);
        write(line);
      }
      window_start_ms_ = now;
      warn_in_window_ = 0;
      dropped_in_window_ = 0;
    }
    if (warn_in_window_ >= warn_per_second_) {
      ++dropped_in_window_;
      ++suppressed_;
      return;
    }
    ++warn_in_window_;
  }
  spdlog::memory_buf_t line;
  formatter_->format(msg, line);
  write(line);
}

void LogSink::flush_() { std::fflush(file_ != nullptr ? file_ : stderr); }

Status configureLogging(const std::string& path) {
  auto sink =
      std::make_shared<LogSink>(path, kWarnLinesPerSecond, [] { return monoMicros() / 1000; });
  if (Status opened = sink->open(); !opened.ok()) {
    return opened;
  }
  auto logger = std::make_shared<spdlog::logger>("", sink);
  logger->set_level(spdlog::default_logger()->level());
  spdlog::set_default_logger(logger);
  installed() = sink;
  return Status();
}

Status reopenLogFile() {
  const std::shared_ptr<LogSink>& sink = installed();
  return sink == nullptr ? Status() : sink->reopen();
}

}  // namespace sp
