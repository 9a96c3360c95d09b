// Outcome of feeding bytes to one of the RESP parsers, and the reasons a stream is rejected.
#pragma once

#include <cstdint>

namespace sp::resp {

enum class ParseStatus : uint8_t {
  kOk,          // one complete frame was recognised
  kIncomplete,  // more bytes are needed; call again with the same bytes plus more
  kError,       // the stream is malformed and cannot be resynchronised
};

// Why a stream was rejected. Each value has a stable snake_case name (errorName) that is used as
// the `reason` label of shardproxy_protocol_errors_total.
enum class ParseError : uint8_t {
  kNone,
  kBadType,           // a byte where a type marker was expected is not one
  kBadArrayLen,       // '*' not followed by a valid decimal length
  kArrayTooLong,      // array length above the limit
  kBadBulkLen,        // '$' not followed by a valid decimal length (or negative in a request)
  kBulkTooLong,       // bulk length above the limit
  kExpectedBulk,      // a request array element is not a '$' bulk string
  kBadCrlf,           // a line or bulk payload not terminated by CRLF
  kInlineTooLong,     // an inline command line (or a header line) above the limit
  kUnbalancedQuotes,  // an inline command with an unterminated quote
  kBadInteger,        // ':' (or another numeric type) with a malformed number
  kTooDeep,           // reply nesting above the depth limit
};

const char* errorName(ParseError error);     // "bad_bulk_len"
const char* errorMessage(ParseError error);  // "invalid bulk length"

}  // namespace sp::resp
