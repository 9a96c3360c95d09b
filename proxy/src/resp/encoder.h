// Appends RESP2 values to an output buffer. Used for local replies, merged replies and the
// commands the proxy builds itself (split MGET fragments, PING, ASKING).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sp::resp {

void appendArrayHeader(std::string& out, int64_t count);
void appendBulk(std::string& out, std::string_view payload);
void appendNullBulk(std::string& out);
void appendInteger(std::string& out, int64_t value);
void appendStatus(std::string& out, std::string_view text);  // "+text\r\n"
void appendError(std::string& out, std::string_view text);   // "-text\r\n" (text without '-')
// An array of status lines: what redis-server's HELP subcommands answer.
void appendStatusLines(std::string& out, std::span<const std::string_view> lines);

// Encodes argv as a multibulk command.
template <typename Args>
void appendCommand(std::string& out, const Args& args) {
  appendArrayHeader(out, static_cast<int64_t>(args.size()));
  for (const auto& a : args) {
    appendBulk(out, a);
  }
}

}  // namespace sp::resp
