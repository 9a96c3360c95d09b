// Readers for the few replies the proxy looks inside. Each takes a reply at the start of its
// input (bytes after it are ignored) and validates only what it reads; nesting is walked with a
// single counter of elements still owed, so no stack is needed and nothing is allocated.
#include "resp/reply_reader.h"

#include <cstring>
#include <limits>

namespace sp::resp {
namespace {

// Strict decimal (redis-server's string2ll) in p[0..len).
bool parseInt64(const char* p, size_t len, int64_t* out) {
  if (len == 0) {
    return false;
  }
  const bool neg = p[0] == '-';
  size_t i = neg ? 1 : 0;
  if (i == len || (p[i] == '0' && (neg || len != 1))) {
    return false;
  }
  const uint64_t cap = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (neg ? 1 : 0);
  uint64_t v = 0;
  for (; i < len; ++i) {
    const unsigned d = static_cast<unsigned char>(p[i]) - static_cast<unsigned>('0');
    if (d > 9 || v > (cap - d) / 10) {
      return false;
    }
    v = v * 10 + d;
  }
  *out = neg ? static_cast<int64_t>(~v + 1) : static_cast<int64_t>(v);
  return true;
}

// The first line of `in` after its type byte: [1, CR) with the CRLF present.
bool firstLine(std::string_view in, std::string_view* line, size_t* after) {
  if (in.size() < 3) {
    return false;
  }
  const void* lf = std::memchr(in.data() + 1, '\n', in.size() - 1);
  if (lf == nullptr) {
    return false;
  }
  const size_t at = static_cast<size_t>(static_cast<const char*>(lf) - in.data());
  if (at < 2 || in[at - 1] != '\r') {
    return false;
  }
  *line = in.substr(1, at - 2);
  *after = at + 1;
  return true;
}

// Size of the complete reply at the start of `in`, or false when it is malformed or cut short.
bool replySize(std::string_view in, size_t* size) {
  size_t pos = 0;
  uint64_t owed = 1;
  while (owed > 0) {
    if (pos >= in.size()) {
      return false;
    }
    const std::string_view rest = in.substr(pos);
    std::string_view line;
    size_t after = 0;
    if (!firstLine(rest, &line, &after)) {
      return false;
    }
    const char type = rest[0];
    int64_t n = 0;
    switch (type) {
      case '+':
      case '-':
      case '(':
      case ',':
      case '_':
      case '#':
        --owed;
        break;
      case ':':
        if (!parseInt64(line.data(), line.size(), &n)) {
          return false;
        }
        --owed;
        break;
      case '$':
      case '=':
      case '!':
        if (!parseInt64(line.data(), line.size(), &n) || n < -1 || (n == -1 && type != '$')) {
          return false;
        }
        if (n >= 0) {
          const size_t len = static_cast<size_t>(n);
          if (len > rest.size() - after || rest.size() - after - len < 2 ||
              rest[after + len] != '\r' || rest[after + len + 1] != '\n') {
            return false;
          }
          after += len + 2;
        }
        --owed;
        break;
      case '*':
      case '%':
      case '~':
      case '>':
      case '|': {
        if (!parseInt64(line.data(), line.size(), &n) || n < -1 || (n == -1 && type != '*')) {
          return false;
        }
        // Every element takes at least 3 bytes, which bounds `owed` by the input size.
        const uint64_t elements =
            n <= 0 ? 0 : static_cast<uint64_t>(n) * ((type == '%' || type == '|') ? 2 : 1);
        if (n > 0 && elements > (rest.size() - after) / 3) {
          return false;
        }
        // An attribute annotates the next element instead of taking a slot of its own.
        if (type != '|') {
          --owed;
        }
        owed += elements;
        break;
      }
      default:
        return false;
    }
    pos += after;
  }
  *size = pos;
  return true;
}

}  // namespace

bool readInteger(std::string_view reply, int64_t* out) {
  std::string_view line;
  size_t after = 0;
  return !reply.empty() && reply[0] == ':' && firstLine(reply, &line, &after) &&
         parseInt64(line.data(), line.size(), out);
}

bool readArrayElements(std::string_view reply, std::vector<std::string_view>* out) {
  out->clear();
  std::string_view line;
  size_t pos = 0;
  int64_t n = 0;
  if (reply.empty() || reply[0] != '*' || !firstLine(reply, &line, &pos) ||
      !parseInt64(line.data(), line.size(), &n) || n < 0) {
    return false;
  }
  for (int64_t i = 0; i < n; ++i) {
    size_t size = 0;
    if (!replySize(reply.substr(pos), &size)) {
      out->clear();
      return false;
    }
    out->push_back(reply.substr(pos, size));
    pos += size;
  }
  return true;
}

bool readString(std::string_view reply, std::string_view* out) {
  std::string_view line;
  size_t after = 0;
  if (reply.empty() || (reply[0] != '$' && reply[0] != '+') || !firstLine(reply, &line, &after)) {
    return false;
  }
  if (reply[0] == '+') {
    *out = line;
    return true;
  }
  int64_t n = 0;
  if (!parseInt64(line.data(), line.size(), &n) || n < 0) {
    return false;
  }
  const size_t len = static_cast<size_t>(n);
  if (len > reply.size() - after || reply.size() - after - len < 2 || reply[after + len] != '\r' ||
      reply[after + len + 1] != '\n') {
    return false;
  }
  *out = reply.substr(after, len);
  return true;
}

}  // namespace sp::resp
