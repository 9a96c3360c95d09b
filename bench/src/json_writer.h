// JsonWriter: builds a JSON document with commas and indentation handled, for the result files
// of matrix and scenario runs. Values are written as they come; nothing is buffered per level.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"

namespace sp::bench {

class JsonWriter {
 public:
  JsonWriter& beginObject() { return open('{'); }
  JsonWriter& endObject() { return close('}'); }
  JsonWriter& beginArray() { return open('['); }
  JsonWriter& endArray() { return close(']'); }
  JsonWriter& key(std::string_view k) {
    separate();
    appendJsonString(out_, k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view v) {
    separate();
    appendJsonString(out_, v);
    return *this;
  }
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(bool v) {
    separate();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& value(uint64_t v) {
    separate();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int64_t v) {
    separate();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v, int decimals = 3) {
    separate();
    appendJsonNumber(out_, v, decimals);
    return *this;
  }
  JsonWriter& value(std::optional<double> v, int decimals = 3) {
    if (!v) {
      separate();
      out_ += "null";
      return *this;
    }
    return value(*v, decimals);
  }
  JsonWriter& null() {
    separate();
    out_ += "null";
    return *this;
  }
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& field(std::string_view k, double v, int decimals) {
    key(k);
    return value(v, decimals);
  }
  JsonWriter& field(std::string_view k, std::optional<double> v, int decimals) {
    key(k);
    return value(v, decimals);
  }
  const std::string& text() {
    if (out_.empty() || out_.back() != '\n') {
      out_ += '\n';
    }
    return out_;
  }

 private:
  JsonWriter& open(char c) {
    separate();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
      newline();
    }
    out_ += c;
    return *this;
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) {
      return;
    }
    if (!first_.back()) {
      out_ += ',';
    }
    first_.back() = false;
    newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace sp::bench
