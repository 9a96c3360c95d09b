// Reply: a RESP2 reply as a tree, and parseReply, for tests that check replies by value (an
// independent reader: it shares no code with the proxy's scanner).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::fakes {

struct Reply {
  // '+' status, '-' error, ':' integer, '$' bulk, '*' array; '?' matches any reply.
  char type = '?';
  std::string str;
  int64_t num = 0;
  bool null = false;  // $-1 or *-1
  std::vector<Reply> elems;

  static Reply status(std::string s) { return {'+', std::move(s), 0, false, {}}; }
  static Reply bulk(std::string s) { return {'$', std::move(s), 0, false, {}}; }
  static Reply nullBulk() { return {'$', "", 0, true, {}}; }
  static Reply integer(int64_t n) { return {':', "", n, false, {}}; }
  static Reply array(std::vector<Reply> elems) { return {'*', "", 0, false, std::move(elems)}; }

  bool isError() const { return type == '-'; }
  bool isStatus(std::string_view s) const { return type == '+' && str == s; }
  bool isNullArray() const { return type == '*' && null; }

  bool matches(const Reply& wanted) const {
    if (wanted.type == '?') {
      return true;
    }
    if (type != wanted.type || null != wanted.null || str != wanted.str || num != wanted.num ||
        elems.size() != wanted.elems.size()) {
      return false;
    }
    for (size_t i = 0; i < elems.size(); ++i) {
      if (!elems[i].matches(wanted.elems[i])) {
        return false;
      }
    }
    return true;
  }

  std::string describe() const {
    switch (type) {
      case '+':
        return "+" + str;
      case '-':
        return "-" + str;
      case ':':
        return ":" + std::to_string(num);
      case '$':
        return null ? "(nil)" : "\"" + str + "\"";
      case '*': {
        if (null) {
          return "(nil array)";
        }
        std::string out = "[";
        for (size_t i = 0; i < elems.size(); ++i) {
          out += (i == 0 ? "" : ", ") + elems[i].describe();
        }
        return out + "]";
      }
      default:
        return "(any)";
    }
  }
};

// One reply from the front of `in`: 1 parsed (*used set), 0 more bytes needed, -1 malformed.
inline int parseReply(std::string_view in, size_t* used, Reply* out, int depth = 0) {
  if (depth > 32) {
    return -1;
  }
  const size_t eol = in.find("\r\n");
  if (eol == std::string_view::npos) {
    return 0;
  }
  if (eol == 0) {
    return -1;
  }
  const std::string_view line = in.substr(1, eol - 1);
  out->type = in[0];
  size_t pos = eol + 2;
  auto number = [&line](int64_t* n) {
    auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), *n);
    return ec == std::errc() && ptr == line.data() + line.size();
  };
  switch (in[0]) {
    case '+':
    case '-':
      out->str = line;
      *used = pos;
      return 1;
    case ':':
      *used = pos;
      return number(&out->num) ? 1 : -1;
    case '$': {
      int64_t len = 0;
      if (!number(&len) || len < -1) {
        return -1;
      }
      if (len == -1) {
        out->null = true;
        *used = pos;
        return 1;
      }
      if (in.size() < pos + static_cast<size_t>(len) + 2) {
        return 0;
      }
      out->str = in.substr(pos, static_cast<size_t>(len));
      if (in.substr(pos + static_cast<size_t>(len), 2) != "\r\n") {
        return -1;
      }
      *used = pos + static_cast<size_t>(len) + 2;
      return 1;
    }
    case '*': {
      int64_t count = 0;
      if (!number(&count) || count < -1) {
        return -1;
      }
      if (count == -1) {
        out->null = true;
        *used = pos;
        return 1;
      }
      for (int64_t i = 0; i < count; ++i) {
        Reply elem;
        size_t elem_used = 0;
        const int r = parseReply(in.substr(pos), &elem_used, &elem, depth + 1);
        if (r <= 0) {
          return r;
        }
        out->elems.push_back(std::move(elem));
        pos += elem_used;
      }
      *used = pos;
      return 1;
    }
    default:
      return -1;
  }
}

}  // namespace sp::fakes
