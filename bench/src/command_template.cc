// Template splitting, compilation into literal and dynamic segments, and expansion.
#include "command_template.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "key_generator.h"

namespace sp::bench {
namespace {

constexpr std::string_view kKeyToken = "__key__";
constexpr std::string_view kRandToken = "__rand_int__";
constexpr std::string_view kDataToken = "__data__";
constexpr int kRandDigits = 12;

void appendNumber(std::string& out, uint64_t value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, static_cast<size_t>(res.ptr - buf));
}

size_t digitCount(uint64_t value) {
  size_t n = 1;
  while (value >= 10) {
    value /= 10;
    ++n;
  }
  return n;
}

void appendPadded(std::string& out, uint64_t value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  const auto len = static_cast<size_t>(res.ptr - buf);
  if (len < kRandDigits) {
    out.append(kRandDigits - len, '0');
  }
  out.append(buf, len);
}

void appendBulkHeader(std::string& out, size_t length) {
  out.push_back('$');
  appendNumber(out, length);
  out.append("\r\n", 2);
}

}  // namespace

bool CommandTemplate::split(std::string_view text, std::vector<std::string>* argv,
                            std::string* error) {
  argv->clear();
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    if (i == text.size()) {
      break;
    }
    std::string arg;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) {
      const char c = text[i];
      if (c == '"' || c == '\'') {
        const char quote = c;
        ++i;
        bool closed = false;
        while (i < text.size()) {
          if (text[i] == quote) {
            closed = true;
            ++i;
            break;
          }
          if (quote == '"' && text[i] == '\\' && i + 1 < text.size()) {
            const char e = text[i + 1];
            arg.push_back(e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e);
            i += 2;
            continue;
          }
          arg.push_back(text[i++]);
        }
        if (!closed) {
          *error = "unbalanced quotes in command '" + std::string(text) + "'";
          return false;
        }
      } else {
        arg.push_back(c);
        ++i;
      }
    }
    argv->push_back(std::move(arg));
  }
  if (argv->empty()) {
    *error = "empty command";
    return false;
  }
  return true;
}

bool CommandTemplate::compile(const std::vector<std::string>& argv, const TemplateEnv& env,
                              CommandTemplate* out, std::string* error) {
  CommandTemplate t;
  t.argv_ = argv;
  t.name_ = argv.empty() ? std::string() : argv[0];
  std::transform(t.name_.begin(), t.name_.end(), t.name_.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });

  std::string literal;  // pending literal bytes not yet flushed into a segment
  auto flushLiteral = [&] {
    if (!literal.empty()) {
      t.segments_.push_back(
          {false, static_cast<uint32_t>(t.pool_.size()), static_cast<uint32_t>(literal.size())});
      t.pool_ += literal;
      literal.clear();
    }
  };

  literal += '*';
  literal += std::to_string(argv.size());
  literal += "\r\n";
  for (const std::string& arg : argv) {
    // Cut the argument into literal text and placeholder pieces.
    std::string text;  // literal text of the argument being assembled
    std::vector<std::pair<PieceKind, std::string>> parts;
    size_t numbers = 0;
    size_t i = 0;
    while (i < arg.size()) {
      PieceKind kind = PieceKind::kLiteral;
      size_t token_len = 0;
      std::string_view rest(arg.data() + i, arg.size() - i);
      if (rest.starts_with(kKeyToken)) {
        kind = PieceKind::kKey;
        token_len = kKeyToken.size();
      } else if (rest.starts_with(kRandToken) && !env.rand_int_literal) {
        kind = PieceKind::kRandInt;
        token_len = kRandToken.size();
      } else if (rest.starts_with(kDataToken)) {
        if (env.data_fixed) {
          text += env.fixed_data;
          i += kDataToken.size();
          t.uses_data_ = true;
          continue;
        }
        kind = PieceKind::kData;
        token_len = kDataToken.size();
      }
      if (kind == PieceKind::kLiteral) {
        text.push_back(arg[i++]);
        continue;
      }
      if (!text.empty()) {
        parts.emplace_back(PieceKind::kLiteral, std::move(text));
        text.clear();
      }
      parts.emplace_back(kind, std::string());
      if (kind == PieceKind::kKey || kind == PieceKind::kRandInt) {
        t.uses_key_ = true;
        ++numbers;
      } else {
        t.uses_data_ = true;
      }
      i += token_len;
    }
    if (numbers > kMaxNumbersPerArg) {
      *error = "too many key placeholders in one argument of '" + t.name_ + "'";
      return false;
    }
    if (parts.empty()) {
      // A fully literal argument: part of the surrounding literal segment.
      literal += '$';
      literal += std::to_string(text.size());
      literal += "\r\n";
      literal += text;
      literal += "\r\n";
      continue;
    }
    if (!text.empty()) {
      parts.emplace_back(PieceKind::kLiteral, std::move(text));
    }
    flushLiteral();
    Segment seg{true, static_cast<uint32_t>(t.pieces_.size()), 0};
    for (auto& [kind, bytes] : parts) {
      Piece p{kind, 0, 0};
      if (kind == PieceKind::kLiteral) {
        p.offset = static_cast<uint32_t>(t.pool_.size());
        p.length = static_cast<uint32_t>(bytes.size());
        t.pool_ += bytes;
      }
      t.pieces_.push_back(p);
      seg.length++;
    }
    t.segments_.push_back(seg);
  }
  flushLiteral();
  *out = std::move(t);
  return true;
}

CommandTemplate CommandTemplate::inlineCommand(std::string_view line) {
  CommandTemplate t;
  std::string ignored;
  split(line, &t.argv_, &ignored);
  t.name_ = t.argv_.empty() ? std::string() : t.argv_[0];
  std::transform(t.name_.begin(), t.name_.end(), t.name_.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  t.pool_ = std::string(line) + "\r\n";
  t.segments_.push_back({false, 0, static_cast<uint32_t>(t.pool_.size())});
  return t;
}

size_t CommandTemplate::expand(std::string& out, const ExpandArgs& args) const {
  const size_t start = out.size();
  bool first_number = true;
  for (const Segment& seg : segments_) {
    if (!seg.dynamic) {
      out.append(pool_.data() + seg.offset, seg.length);
      continue;
    }
    // Pass 1: draw the numbers and measure the argument; pass 2: write it.
    uint64_t numbers[kMaxNumbersPerArg];
    size_t n = 0;
    size_t length = 0;
    for (uint32_t i = seg.offset; i < seg.offset + seg.length; ++i) {
      const Piece& p = pieces_[i];
      switch (p.kind) {
        case PieceKind::kLiteral:
          length += p.length;
          break;
        case PieceKind::kKey:
          numbers[n] = args.key;
          first_number = false;
          length += args.key_prefix.size() + digitCount(numbers[n++]);
          break;
        case PieceKind::kRandInt:
          numbers[n] =
              first_number || args.more_keys == nullptr ? args.key : args.more_keys->next();
          first_number = false;
          length += std::max<size_t>(kRandDigits, digitCount(numbers[n++]));
          break;
        case PieceKind::kData:
          length += args.data_head.size() + args.data_fill.size();
          break;
      }
    }
    appendBulkHeader(out, length);
    n = 0;
    for (uint32_t i = seg.offset; i < seg.offset + seg.length; ++i) {
      const Piece& p = pieces_[i];
      switch (p.kind) {
        case PieceKind::kLiteral:
          out.append(pool_.data() + p.offset, p.length);
          break;
        case PieceKind::kKey:
          out.append(args.key_prefix);
          appendNumber(out, numbers[n++]);
          break;
        case PieceKind::kRandInt:
          appendPadded(out, numbers[n++]);
          break;
        case PieceKind::kData:
          out.append(args.data_head);
          out.append(args.data_fill);
          break;
      }
    }
    out.append("\r\n", 2);
  }
  return out.size() - start;
}

}  // namespace sp::bench
