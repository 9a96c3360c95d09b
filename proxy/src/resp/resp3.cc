// RESP2 -> RESP3 re-encoding of the replies the proxy builds (resp3.h).
#include "resp/resp3.h"

#include <charconv>
#include <cstdint>

namespace sp::resp {
namespace {

constexpr int kMaxDepth = 64;  // proxy-built replies nest three levels at most

// The line after the type byte at `pos` (without CRLF); false when incomplete.
bool readLine(std::string_view in, size_t pos, std::string_view* line, size_t* next) {
  const size_t end = in.find("\r\n", pos);
  if (end == std::string_view::npos) {
    return false;
  }
  *line = in.substr(pos, end - pos);
  *next = end + 2;
  return true;
}

bool toInt(std::string_view text, int64_t* value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

// Converts the value at *pos into out; false when the input is not a well-formed reply.
bool convert(std::string_view in, size_t* pos, Resp3Shape shape, int depth, std::string* out) {
  if (*pos >= in.size() || depth > kMaxDepth) {
    return false;
  }
  const char type = in[*pos];
  std::string_view line;
  size_t next = 0;
  if (!readLine(in, *pos + 1, &line, &next)) {
    return false;
  }
  switch (type) {
    case '$':
    case '=':
    case '!': {
      int64_t len = 0;
      if (!toInt(line, &len)) {
        return false;
      }
      if (len < 0) {
        out->append("_\r\n");
        *pos = next;
        return true;
      }
      if (next + static_cast<size_t>(len) + 2 > in.size()) {
        return false;
      }
      const std::string_view payload = in.substr(next, static_cast<size_t>(len));
      if (type == '$' && shape == Resp3Shape::kVerbatim) {
        out->push_back('=');
        out->append(std::to_string(payload.size() + 4));
        out->append("\r\ntxt:");
      } else {
        out->push_back(type);
        out->append(line);
        out->append("\r\n");
      }
      out->append(payload);
      out->append("\r\n");
      *pos = next + static_cast<size_t>(len) + 2;
      return true;
    }
    case '*':
    case '%':
    case '~':
    case '>':
    case '|': {
      int64_t count = 0;
      if (!toInt(line, &count)) {
        return false;
      }
      if (count < 0) {
        out->append("_\r\n");
        *pos = next;
        return true;
      }
      int64_t elements = type == '%' || type == '|' ? count * 2 : count;
      if (type == '*' && shape == Resp3Shape::kMap && count % 2 == 0) {
        out->push_back('%');
        out->append(std::to_string(count / 2));
      } else if (type == '*' && shape == Resp3Shape::kPush) {
        out->push_back('>');
        out->append(line);
      } else {
        out->push_back(type);
        out->append(line);
      }
      out->append("\r\n");
      *pos = next;
      for (int64_t i = 0; i < elements; ++i) {
        if (!convert(in, pos, Resp3Shape::kPlain, depth + 1, out)) {
          return false;
        }
      }
      if (type == '|') {
        return convert(in, pos, shape, depth + 1, out);  // the value the attribute is about
      }
      return true;
    }
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
      out->append(in.substr(*pos, next - *pos));
      *pos = next;
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string toResp3(std::string_view reply, Resp3Shape shape) {
  std::string out;
  out.reserve(reply.size() + 16);
  size_t pos = 0;
  while (pos < reply.size()) {
    if (!convert(reply, &pos, shape, 0, &out)) {
      return std::string(reply);
    }
  }
  return out;
}

}  // namespace sp::resp
