// ReplyScanner: finds where one backend reply ends and what type it is, without building values.
// Handles every RESP2 type (nested and null arrays included) and the RESP3 types, with limits on
// sizes and nesting depth. Resumable: a large reply arriving in many reads is scanned once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "resp/parse_status.h"

namespace sp::resp {

struct ScannerLimits {
  uint64_t max_bulk_len = 1024ull * 1024 * 1024;  // replies can legally exceed request limits
  uint64_t max_array_len = 1ull << 32;
  // Any depth redis-server sends (a script's reply may nest thousands of levels): the scanner
  // keeps one counter per open level and never recurses.
  uint32_t max_depth = 1u << 20;
};

struct ReplyInfo {
  char type = 0;      // the first byte: '+', '-', ':', '$', '*', or a RESP3 marker
  int64_t value = 0;  // ':' the integer; '$' and '*' the declared length (-1 for null)
  size_t size = 0;    // bytes of the whole reply, nested elements included
};

class ReplyScanner {
 public:
  explicit ReplyScanner(ScannerLimits limits = {});

  // Scans one reply at the start of `input`. Same contract as RequestParser::parse: kOk fills
  // *info and *consumed; kIncomplete means call again with the same bytes plus more; kError is
  // final for the connection.
  ParseStatus scan(std::string_view input, size_t* consumed, ReplyInfo* info);

  ParseError error() const { return error_; }
  void reset();

 private:
  ParseStatus fail(ParseError error);
  bool completeElement();

  ScannerLimits limits_;
  ParseError error_ = ParseError::kNone;
  // Resume state: offset of the next unscanned byte and the elements still owed at each depth.
  size_t pos_ = 0;
  ReplyInfo top_;
  bool have_top_ = false;
  std::vector<uint64_t> pending_;  // [0] is a virtual root owing the reply itself
  size_t line_scan_ = 0;           // where the LF search of the line at pos_ resumes
  size_t bulk_end_ = 0;            // nonzero: the bulk at pos_ ends here (CRLF included)
};

}  // namespace sp::resp
