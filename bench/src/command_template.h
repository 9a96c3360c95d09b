// CommandTemplate: a command with placeholders, compiled once into RESP bytes so that building a
// request costs a few appends. Placeholders may appear anywhere inside an argument:
//   __key__       the key prefix followed by the request's key number (memtier)
//   __rand_int__  the key number zero-padded to 12 digits (redis-benchmark); a second and later
//                 __rand_int__ in the same command draw fresh numbers, as redis-benchmark does
//   __data__      the value (--data-size bytes, or the --verify header plus filler)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sp::bench {

class KeyGenerator;

struct TemplateEnv {
  bool rand_int_literal = false;  // no key range given: __rand_int__ is sent as it is written
  bool data_fixed = false;        // the value never changes: bake fixed_data into the bytes
  std::string_view fixed_data;
};

struct ExpandArgs {
  uint64_t key = 0;
  std::string_view key_prefix;
  KeyGenerator* more_keys = nullptr;  // source of the 2nd+ __rand_int__ (nullptr: reuse key)
  std::string_view data_head;         // the value is data_head followed by data_fill
  std::string_view data_fill;
};

class CommandTemplate {
 public:
  static constexpr size_t kMaxNumbersPerArg = 16;

  // Splits a command line into arguments on whitespace; "double" and 'single' quotes group
  // (backslash escapes inside double quotes), as redis-cli does. False with a message on
  // unbalanced quotes or an empty command.
  static bool split(std::string_view text, std::vector<std::string>* argv, std::string* error);

  // Compiles argv; false when an argument has more than kMaxNumbersPerArg placeholders.
  static bool compile(const std::vector<std::string>& argv, const TemplateEnv& env,
                      CommandTemplate* out, std::string* error);

  // A raw inline command ("PING\r\n"), sent as it is.
  static CommandTemplate inlineCommand(std::string_view line);

  // Appends one request and returns the number of bytes appended.
  size_t expand(std::string& out, const ExpandArgs& args) const;

  const std::vector<std::string>& argv() const { return argv_; }
  const std::string& name() const { return name_; }  // argv[0] in upper case
  bool usesKey() const { return uses_key_; }         // __key__ or a substituted __rand_int__
  bool usesData() const { return uses_data_; }
  bool isFixed() const { return pieces_.empty(); }  // the same bytes every time

 private:
  enum class PieceKind : uint8_t { kLiteral, kKey, kRandInt, kData };
  struct Piece {
    PieceKind kind;
    uint32_t offset;  // kLiteral: bytes in pool_
    uint32_t length;
  };
  struct Segment {
    bool dynamic;
    uint32_t offset;  // literal: bytes in pool_; dynamic: first piece
    uint32_t length;  // literal: byte count; dynamic: piece count
  };

  std::vector<std::string> argv_;
  std::string name_;
  std::string pool_;
  std::vector<Segment> segments_;
  std::vector<Piece> pieces_;
  bool uses_key_ = false;
  bool uses_data_ = false;
};

}  // namespace sp::bench
