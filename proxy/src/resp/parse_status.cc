// Names (metric labels) and messages (protocol error replies) of the parse errors. Messages follow
// redis-server's wording where it has one, so "-ERR Protocol error: <message>" reads the same.
#include "resp/parse_status.h"

namespace sp::resp {

const char* errorName(ParseError error) {
  switch (error) {
    case ParseError::kNone:
      return "none";
    case ParseError::kBadType:
      return "bad_type";
    case ParseError::kBadArrayLen:
      return "bad_array_len";
    case ParseError::kArrayTooLong:
      return "array_too_long";
    case ParseError::kBadBulkLen:
      return "bad_bulk_len";
    case ParseError::kBulkTooLong:
      return "bulk_too_long";
    case ParseError::kExpectedBulk:
      return "expected_bulk";
    case ParseError::kBadCrlf:
      return "bad_crlf";
    case ParseError::kInlineTooLong:
      return "inline_too_long";
    case ParseError::kUnbalancedQuotes:
      return "unbalanced_quotes";
    case ParseError::kBadInteger:
      return "bad_integer";
    case ParseError::kTooDeep:
      return "too_deep";
  }
  return "unknown";
}

const char* errorMessage(ParseError error) {
  switch (error) {
    case ParseError::kNone:
      return "no error";
    case ParseError::kBadType:
      return "invalid reply type byte";
    case ParseError::kBadArrayLen:
      return "invalid multibulk length";
    case ParseError::kArrayTooLong:
      return "invalid multibulk length";  // redis-server: same reply for a count above its limit
    case ParseError::kBadBulkLen:
      return "invalid bulk length";
    case ParseError::kBulkTooLong:
      return "invalid bulk length";  // redis-server: same reply above proto-max-bulk-len
    case ParseError::kExpectedBulk:
      return "expected '$'";  // redis-server appends ", got 'c'"; the caller may do the same
    case ParseError::kBadCrlf:
      return "expected CRLF";
    case ParseError::kInlineTooLong:
      return "too big inline request";
    case ParseError::kUnbalancedQuotes:
      return "unbalanced quotes in request";
    case ParseError::kBadInteger:
      return "invalid integer value";
    case ParseError::kTooDeep:
      return "reply nesting too deep";
  }
  return "unknown error";
}

}  // namespace sp::resp
