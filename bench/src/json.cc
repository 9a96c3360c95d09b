// Recursive-descent JSON parser (depth-limited) and string/number writers.
#include "json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sp::bench {

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  bool document(JsonValue* out, std::string* error) {
    if (!value(out, 0)) {
      *error = error_ + " at byte " + std::to_string(pos_);
      return false;
    }
    ws();
    if (pos_ != s_.size()) {
      *error = "trailing characters at byte " + std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  static constexpr int kMaxDepth = 64;

  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool fail(const char* msg) {
    error_ = msg;
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) {
      return fail("invalid literal");
    }
    pos_ += word.size();
    return true;
  }

  bool value(JsonValue* v, int depth) {
    if (depth > kMaxDepth) {
      return fail("nesting too deep");
    }
    ws();
    if (pos_ >= s_.size()) {
      return fail("unexpected end of input");
    }
    const char c = s_[pos_];
    if (c == '{') {
      return object(v, depth);
    }
    if (c == '[') {
      return array(v, depth);
    }
    if (c == '"') {
      v->type_ = JsonValue::Type::kString;
      return string(&v->text_);
    }
    if (c == 't') {
      v->type_ = JsonValue::Type::kBool;
      v->bool_ = true;
      return literal("true");
    }
    if (c == 'f') {
      v->type_ = JsonValue::Type::kBool;
      return literal("false");
    }
    if (c == 'n') {
      v->type_ = JsonValue::Type::kNull;
      return literal("null");
    }
    return number(v);
  }

  bool number(JsonValue* v) {
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') {
      ++pos_;
    }
    bool digits = false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        digits = digits || (c >= '0' && c <= '9');
        ++pos_;
      } else {
        break;
      }
    }
    if (!digits) {
      return fail("invalid value");
    }
    v->type_ = JsonValue::Type::kNumber;
    v->text_ = std::string(s_.substr(start, pos_ - start));
    double d = 0;
    auto res = std::from_chars(v->text_.data(), v->text_.data() + v->text_.size(), d);
    if (res.ec != std::errc() || res.ptr != v->text_.data() + v->text_.size()) {
      return fail("invalid number");
    }
    return true;
  }

  bool string(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') {
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return fail("control character in string");
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) {
        break;
      }
      const char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) {
            return fail("truncated \\u escape");
          }
          unsigned cp = 0;
          auto res = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, cp, 16);
          if (res.ec != std::errc() || res.ptr != s_.data() + pos_ + 4) {
            return fail("invalid \\u escape");
          }
          pos_ += 4;
          // UTF-8 encode (surrogate pairs are kept as two 3-byte sequences; good enough here).
          if (cp < 0x80) {
            out->push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
          } else {
            out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
            out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
          }
          break;
        }
        default:
          return fail("invalid escape");
      }
    }
    return fail("unterminated string");
  }

  bool array(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kArray;
    ++pos_;
    ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      JsonValue element;
      if (!value(&element, depth + 1)) {
        return false;
      }
      v->elements_.push_back(std::move(element));
      ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kObject;
    ++pos_;
    ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        return fail("expected a member name");
      }
      std::string key;
      if (!string(&key)) {
        return false;
      }
      ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        return fail("expected ':'");
      }
      ++pos_;
      JsonValue member;
      if (!value(&member, depth + 1)) {
        return false;
      }
      v->members_.emplace_back(std::move(key), std::move(member));
      ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

namespace {
const JsonValue& nullValue() {
  static const JsonValue v;
  return v;
}
}  // namespace

bool JsonValue::parse(std::string_view text, JsonValue* out, std::string* error) {
  JsonParser p(text);
  JsonValue v;
  if (!p.document(&v, error)) {
    return false;
  }
  *out = std::move(v);
  return true;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  if (type_ == Type::kObject) {
    for (const auto& [k, v] : members_) {
      if (k == key) {
        return v;
      }
    }
  }
  return nullValue();
}

const JsonValue& JsonValue::operator[](size_t index) const {
  if (type_ == Type::kArray && index < elements_.size()) {
    return elements_[index];
  }
  return nullValue();
}

bool JsonValue::has(std::string_view key) const {
  if (type_ != Type::kObject) {
    return false;
  }
  for (const auto& m : members_) {
    if (m.first == key) {
      return true;
    }
  }
  return false;
}

size_t JsonValue::size() const {
  return type_ == Type::kArray ? elements_.size() : (type_ == Type::kObject ? members_.size() : 0);
}

double JsonValue::asDouble(double fallback) const {
  if (type_ != Type::kNumber) {
    return fallback;
  }
  double d = fallback;
  std::from_chars(text_.data(), text_.data() + text_.size(), d);
  return d;
}

uint64_t JsonValue::asU64(uint64_t fallback) const {
  if (type_ != Type::kNumber) {
    return fallback;
  }
  uint64_t v = 0;
  auto res = std::from_chars(text_.data(), text_.data() + text_.size(), v);
  if (res.ec == std::errc() && res.ptr == text_.data() + text_.size()) {
    return v;
  }
  const double d = asDouble(-1);
  return d >= 0 ? static_cast<uint64_t>(d) : fallback;
}

bool JsonValue::asBool(bool fallback) const { return type_ == Type::kBool ? bool_ : fallback; }

const std::string& JsonValue::asString() const {
  static const std::string empty;
  return type_ == Type::kString ? text_ : empty;
}

void appendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void appendJsonNumber(std::string& out, double v, int decimals) {
  if (!std::isfinite(v)) {
    v = 0;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  out += buf;
}

}  // namespace sp::bench
