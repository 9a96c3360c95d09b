// Scenario argument templates: "{name}" is replaced by a variable's text and "{expr}" by the value
// of an integer expression over variables (+ - * / %, parentheses, decimal literals, min(a, b)
// and max(a, b)), so a scenario can say `--key-maximum {hash_min + keys * 2 / 10 - 1}` and scale
// with one variable.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace sp::bench {

using VarMap = std::map<std::string, std::string, std::less<>>;

// Evaluates an integer expression; false with a message (unknown variable, a variable that is not
// an integer, division by zero, overflow, syntax error).
bool evalExpression(std::string_view expr, const VarMap& vars, int64_t* out, std::string* error);

// Replaces every {...} in `text`: a lone variable name by its text, anything else by the value of
// the expression. "{{" and "}}" stand for literal braces.
bool expandTemplate(std::string_view text, const VarMap& vars, std::string* out,
                    std::string* error);

}  // namespace sp::bench
