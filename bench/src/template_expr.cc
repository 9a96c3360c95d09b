// A recursive-descent evaluator for scenario templates.
#include "template_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace sp::bench {
namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool parseInt64(std::string_view text, int64_t* out) {
  auto res = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && res.ec == std::errc() && res.ptr == text.data() + text.size();
}

class Parser {
 public:
  Parser(std::string_view text, const VarMap& vars, std::string* error)
      : s_(text), vars_(vars), error_(error) {}

  bool parse(int64_t* out) {
    if (!expr(out)) {
      return false;
    }
    skipSpace();
    if (pos_ != s_.size()) {
      return fail("unexpected '" + std::string(s_.substr(pos_, 1)) + "'");
    }
    return true;
  }

 private:
  bool fail(const std::string& message) {
    *error_ = message + " in '" + std::string(s_) + "'";
    return false;
  }

  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) {
      ++pos_;
    }
  }

  bool expr(int64_t* out) {
    if (!term(out)) {
      return false;
    }
    for (;;) {
      skipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) {
        return true;
      }
      const char op = s_[pos_++];
      int64_t rhs = 0;
      if (!term(&rhs)) {
        return false;
      }
      if (op == '+' ? __builtin_add_overflow(*out, rhs, out)
                    : __builtin_sub_overflow(*out, rhs, out)) {
        return fail("integer overflow");
      }
    }
  }

  bool term(int64_t* out) {
    if (!factor(out)) {
      return false;
    }
    for (;;) {
      skipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '*' && s_[pos_] != '/' && s_[pos_] != '%')) {
        return true;
      }
      const char op = s_[pos_++];
      int64_t rhs = 0;
      if (!factor(&rhs)) {
        return false;
      }
      if (op == '*') {
        if (__builtin_mul_overflow(*out, rhs, out)) {
          return fail("integer overflow");
        }
      } else {
        if (rhs == 0) {
          return fail("division by zero");
        }
        *out = op == '/' ? *out / rhs : *out % rhs;
      }
    }
  }

  bool factor(int64_t* out) {
    skipSpace();
    if (pos_ >= s_.size()) {
      return fail("missing operand");
    }
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      if (!expr(out)) {
        return false;
      }
      skipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ')') {
        return fail("missing ')'");
      }
      ++pos_;
      return true;
    }
    if (c == '-') {
      ++pos_;
      if (!factor(out)) {
        return false;
      }
      *out = -*out;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      }
      if (!parseInt64(s_.substr(start, pos_ - start), out)) {
        return fail("number out of range");
      }
      return true;
    }
    if (isIdentStart(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && isIdentChar(s_[pos_])) {
        ++pos_;
      }
      const std::string_view name = s_.substr(start, pos_ - start);
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == '(') {
        return call(name, out);
      }
      auto it = vars_.find(name);
      if (it == vars_.end()) {
        return fail("unknown variable '" + std::string(name) + "'");
      }
      if (!parseInt64(it->second, out)) {
        return fail("variable '" + std::string(name) + "' is not an integer ('" + it->second +
                    "')");
      }
      return true;
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  // min(a, b, ...) and max(a, b, ...).
  bool call(std::string_view name, int64_t* out) {
    if (name != "min" && name != "max") {
      return fail("unknown function '" + std::string(name) + "' (min and max are known)");
    }
    ++pos_;  // '('
    bool first = true;
    for (;;) {
      int64_t v = 0;
      if (!expr(&v)) {
        return false;
      }
      *out = first ? v : name == "min" ? std::min(*out, v) : std::max(*out, v);
      first = false;
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ')') {
        ++pos_;
        return true;
      }
      return fail("missing ')' after the arguments of " + std::string(name));
    }
  }

  std::string_view s_;
  const VarMap& vars_;
  std::string* error_;
  size_t pos_ = 0;
};

}  // namespace

bool evalExpression(std::string_view expr, const VarMap& vars, int64_t* out, std::string* error) {
  Parser p(expr, vars, error);
  return p.parse(out);
}

bool expandTemplate(std::string_view text, const VarMap& vars, std::string* out,
                    std::string* error) {
  std::string result;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      result += '{';
      i += 2;
      continue;
    }
    if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      result += '}';
      i += 2;
      continue;
    }
    if (c == '}') {
      *error = "unmatched '}' in '" + std::string(text) + "'";
      return false;
    }
    if (c != '{') {
      result += c;
      ++i;
      continue;
    }
    const size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      *error = "unclosed '{' in '" + std::string(text) + "'";
      return false;
    }
    std::string_view inner = text.substr(i + 1, close - i - 1);
    while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.front()))) {
      inner.remove_prefix(1);
    }
    while (!inner.empty() && std::isspace(static_cast<unsigned char>(inner.back()))) {
      inner.remove_suffix(1);
    }
    bool ident = !inner.empty() && isIdentStart(inner.front());
    for (char ch : inner) {
      ident = ident && isIdentChar(ch);
    }
    if (ident) {
      auto it = vars.find(inner);
      if (it == vars.end()) {
        *error = "unknown variable '" + std::string(inner) + "' in '" + std::string(text) + "'";
        return false;
      }
      result += it->second;
    } else {
      int64_t v = 0;
      if (!evalExpression(inner, vars, &v, error)) {
        return false;
      }
      result += std::to_string(v);
    }
    i = close + 1;
  }
  *out = std::move(result);
  return true;
}

}  // namespace sp::bench
