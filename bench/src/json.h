// A small JSON reader and writer helpers for result files (Debian 12's build set has no JSON
// library). Numbers keep their text so 64-bit counts round-trip exactly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sp::bench {

class JsonValue {
 public:
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  // Parses a whole document; false with a message (and the byte offset) on malformed input.
  static bool parse(std::string_view text, JsonValue* out, std::string* error);

  Type type() const { return type_; }
  bool isObject() const { return type_ == Type::kObject; }
  bool isArray() const { return type_ == Type::kArray; }
  bool isNumber() const { return type_ == Type::kNumber; }
  bool isString() const { return type_ == Type::kString; }

  // Lookups return a shared null value when absent or of another type.
  const JsonValue& operator[](std::string_view key) const;
  const JsonValue& operator[](size_t index) const;
  bool has(std::string_view key) const;
  size_t size() const;  // array elements or object members

  double asDouble(double fallback = 0) const;
  uint64_t asU64(uint64_t fallback = 0) const;
  bool asBool(bool fallback = false) const;
  const std::string& asString() const;  // the text of a string (empty otherwise)
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  const std::vector<JsonValue>& elements() const { return elements_; }

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string text_;  // string contents or number text
  std::vector<JsonValue> elements_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Appends `s` as a JSON string literal (quotes included).
void appendJsonString(std::string& out, std::string_view s);
// Appends a finite double with up to `decimals` decimals (NaN/inf become 0).
void appendJsonNumber(std::string& out, double v, int decimals = 6);

}  // namespace sp::bench
