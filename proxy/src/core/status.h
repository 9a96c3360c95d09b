// Status: how a set-up step ended (open a file, bind a listener, parse an option value, build a
// TLS context, discover a topology, start a shard connection): ok, or a message a person can act
// on. The one shape for such failures; the other two are the ErrorReply a client gets
// (resp/errors.h) and the list of ConfigError a config file gives (config/loader.h).
// [[nodiscard]], so a failure cannot be dropped without a word; a caller that has already checked
// the input says so with static_cast<void>.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace sp {

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok

  static Status failure(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  // Empty when ok.
  const std::string& message() const { return message_; }

  // The same status with "what: " before its message; ok stays ok.
  Status within(std::string_view what) const {
    return ok() ? Status() : failure(std::string(what) + ": " + message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)), failed_(true) {}

  std::string message_;
  bool failed_ = false;
};

}  // namespace sp
