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

// ---- COMMAND INFO and COMMAND DOCS: the shapes redis-server 7 gives them in RESP3 ----

using Rule = bool (*)(std::string_view in, size_t* pos, int depth, std::string* out);
using KeyRule = Rule (*)(std::string_view key);

bool plain(std::string_view in, size_t* pos, int depth, std::string* out) {
  return convert(in, pos, Resp3Shape::kPlain, depth, out);
}

// The length of the array at *pos (moved past its header); false for anything else.
bool arrayHeader(std::string_view in, size_t* pos, int64_t* count) {
  std::string_view line;
  size_t next = 0;
  if (*pos >= in.size() || in[*pos] != '*' || !readLine(in, *pos + 1, &line, &next) ||
      !toInt(line, count) || *count < 0) {
    return false;
  }
  *pos = next;
  return true;
}

// An array whose elements follow `element`, re-headed with `type`.
bool sequence(std::string_view in, size_t* pos, int depth, std::string* out, char type,
              Rule element) {
  const size_t start = *pos;
  int64_t count = 0;
  if (depth > kMaxDepth || !arrayHeader(in, pos, &count)) {
    *pos = start;
    return plain(in, pos, depth, out);
  }
  out->push_back(type);
  out->append(std::to_string(count));
  out->append("\r\n");
  for (int64_t i = 0; i < count; ++i) {
    if (!element(in, pos, depth + 1, out)) {
      return false;
    }
  }
  return true;
}

bool setOfPlain(std::string_view in, size_t* pos, int depth, std::string* out) {
  return sequence(in, pos, depth, out, '~', plain);
}

// A flat array of name/value pairs as a map, each value by rule(name).
bool mapOf(std::string_view in, size_t* pos, int depth, std::string* out, KeyRule rule) {
  const size_t start = *pos;
  int64_t count = 0;
  if (depth > kMaxDepth || !arrayHeader(in, pos, &count) || count % 2 != 0) {
    *pos = start;
    return plain(in, pos, depth, out);
  }
  out->push_back('%');
  out->append(std::to_string(count / 2));
  out->append("\r\n");
  for (int64_t i = 0; i < count; i += 2) {
    const size_t key_at = out->size();
    if (!plain(in, pos, depth + 1, out)) {
      return false;
    }
    // The name as written: "$<len>\r\n<name>\r\n".
    const std::string_view written = std::string_view(*out).substr(key_at);
    const size_t eol = written.find("\r\n");
    const std::string_view key = written[0] == '$' && eol != std::string_view::npos
                                     ? written.substr(eol + 2, written.size() - eol - 4)
                                     : std::string_view();
    if (!rule(key)(in, pos, depth + 1, out)) {
      return false;
    }
  }
  return true;
}

bool mapOfPlain(std::string_view in, size_t* pos, int depth, std::string* out) {
  return mapOf(in, pos, depth, out, [](std::string_view) -> Rule { return plain; });
}

Rule keySpecPart(std::string_view key) { return key == "spec" ? mapOfPlain : plain; }

bool keySpec(std::string_view in, size_t* pos, int depth, std::string* out) {
  return mapOf(in, pos, depth, out, [](std::string_view key) -> Rule {
    if (key == "flags") {
      return setOfPlain;
    }
    if (key == "begin_search" || key == "find_keys") {
      return [](std::string_view i, size_t* p, int d, std::string* o) {
        return mapOf(i, p, d, o, keySpecPart);
      };
    }
    return plain;
  });
}

bool commandEntry(std::string_view in, size_t* pos, int depth, std::string* out) {
  const size_t start = *pos;
  int64_t count = 0;
  if (depth > kMaxDepth || !arrayHeader(in, pos, &count) || count != 10) {
    *pos = start;
    return plain(in, pos, depth, out);  // a null for an unknown command
  }
  out->append("*10\r\n");
  for (int i = 0; i < 10; ++i) {
    bool ok = false;
    if (i == 2 || i == 6 || i == 7) {
      ok = setOfPlain(in, pos, depth + 1, out);  // flags, ACL categories, tips
    } else if (i == 8) {
      ok = sequence(in, pos, depth + 1, out, '~', keySpec);
    } else if (i == 9) {
      if (in.substr(*pos, 4) == "*0\r\n") {
        out->append("~0\r\n");  // no subcommands
        *pos += 4;
        ok = true;
      } else {
        ok = sequence(in, pos, depth + 1, out, '*', commandEntry);
      }
    } else {
      ok = plain(in, pos, depth + 1, out);
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool docArgument(std::string_view in, size_t* pos, int depth, std::string* out) {
  return mapOf(in, pos, depth, out, [](std::string_view key) -> Rule {
    if (key == "flags") {
      return setOfPlain;
    }
    if (key == "arguments") {
      return [](std::string_view i, size_t* p, int d, std::string* o) {
        return sequence(i, p, d, o, '*', docArgument);
      };
    }
    return plain;
  });
}

bool commandDoc(std::string_view in, size_t* pos, int depth, std::string* out) {
  return mapOf(in, pos, depth, out, [](std::string_view key) -> Rule {
    if (key == "history" || key == "doc_flags") {
      return setOfPlain;
    }
    if (key == "arguments") {
      return [](std::string_view i, size_t* p, int d, std::string* o) {
        return sequence(i, p, d, o, '*', docArgument);
      };
    }
    if (key == "subcommands") {
      return [](std::string_view i, size_t* p, int d, std::string* o) {
        return mapOf(i, p, d, o, [](std::string_view) -> Rule { return commandDoc; });
      };
    }
    return plain;
  });
}

bool convertShaped(std::string_view in, size_t* pos, Resp3Shape shape, std::string* out) {
  switch (shape) {
    case Resp3Shape::kCommandInfo:
      return sequence(in, pos, 0, out, '*', commandEntry);
    case Resp3Shape::kCommandDocs:
      return mapOf(in, pos, 0, out, [](std::string_view) -> Rule { return commandDoc; });
    default:
      return convert(in, pos, shape, 0, out);
  }
}

}  // namespace

std::string toResp3(std::string_view reply, Resp3Shape shape) {
  std::string out;
  out.reserve(reply.size() + 16);
  size_t pos = 0;
  while (pos < reply.size()) {
    if (!convertShaped(reply, &pos, shape, &out)) {
      return std::string(reply);
    }
  }
  return out;
}

}  // namespace sp::resp
