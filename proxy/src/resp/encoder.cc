// RESP2 encoding helpers.
#include "resp/encoder.h"

#include <charconv>

namespace sp::resp {
namespace {

void appendPrefixedNumber(std::string& out, char prefix, int64_t value) {
  char buf[24];
  buf[0] = prefix;
  auto res = std::to_chars(buf + 1, buf + sizeof(buf) - 2, value);
  res.ptr[0] = '\r';
  res.ptr[1] = '\n';
  out.append(buf, static_cast<size_t>(res.ptr + 2 - buf));
}

}  // namespace

void appendArrayHeader(std::string& out, int64_t count) { appendPrefixedNumber(out, '*', count); }

void appendBulk(std::string& out, std::string_view payload) {
  appendPrefixedNumber(out, '$', static_cast<int64_t>(payload.size()));
  out.append(payload);
  out.append("\r\n", 2);
}

void appendNullBulk(std::string& out) { out.append("$-1\r\n", 5); }

void appendInteger(std::string& out, int64_t value) { appendPrefixedNumber(out, ':', value); }

void appendStatus(std::string& out, std::string_view text) {
  out.push_back('+');
  out.append(text);
  out.append("\r\n", 2);
}

void appendStatusLines(std::string& out, std::span<const std::string_view> lines) {
  appendArrayHeader(out, static_cast<int64_t>(lines.size()));
  for (std::string_view line : lines) {
    appendStatus(out, line);
  }
}

void appendError(std::string& out, std::string_view text) {
  out.push_back('-');
  out.append(text);
  out.append("\r\n", 2);
}

}  // namespace sp::resp
