// Scenario templates: variables, integer expressions, min/max, literal braces and every error.
#include "template_expr.h"

#include <gtest/gtest.h>

namespace sp::bench {
namespace {

const VarMap kVars = {{"keys", "4000000"}, {"min", "100"}, {"name", "hello"}, {"value", "8"}};

std::string expand(std::string_view text) {
  std::string out;
  std::string error;
  EXPECT_TRUE(expandTemplate(text, kVars, &out, &error)) << error;
  return out;
}

std::string expandError(std::string_view text) {
  std::string out;
  std::string error;
  EXPECT_FALSE(expandTemplate(text, kVars, &out, &error)) << "accepted: " << out;
  return error;
}

TEST(TemplateExprTest, Arithmetic) {
  int64_t v = 0;
  std::string error;
  ASSERT_TRUE(evalExpression("1 + 2 * 3", kVars, &v, &error)) << error;
  EXPECT_EQ(v, 7);
  ASSERT_TRUE(evalExpression("(1 + 2) * 3", kVars, &v, &error));
  EXPECT_EQ(v, 9);
  ASSERT_TRUE(evalExpression("keys * 2 / 10 - 1", kVars, &v, &error));
  EXPECT_EQ(v, 799999);
  ASSERT_TRUE(evalExpression("17 % 5 - -3", kVars, &v, &error));
  EXPECT_EQ(v, 5);
  ASSERT_TRUE(evalExpression("min(4, value)", kVars, &v, &error));
  EXPECT_EQ(v, 4);
  ASSERT_TRUE(evalExpression("max(1, value, 3) * 2", kVars, &v, &error));
  EXPECT_EQ(v, 16);
}

TEST(TemplateExprTest, ExpandsVariablesAndExpressions) {
  EXPECT_EQ(expand("--key-maximum {min + keys / 20 - 1}"), "--key-maximum 200099");
  EXPECT_EQ(expand("-c {value} --threads {min(4, value)}"), "-c 8 --threads 4");
  EXPECT_EQ(expand("{name}-{ name }"), "hello-hello");
  EXPECT_EQ(expand("no placeholders"), "no placeholders");
  EXPECT_EQ(expand("{{literal}} {value}"), "{literal} 8");
}

TEST(TemplateExprTest, Errors) {
  EXPECT_NE(expandError("{nope}").find("unknown variable 'nope'"), std::string::npos);
  EXPECT_NE(expandError("{name + 1}").find("not an integer"), std::string::npos);
  EXPECT_NE(expandError("{1 / 0}").find("division by zero"), std::string::npos);
  EXPECT_NE(expandError("{(1 + 2}").find("missing ')'"), std::string::npos);
  EXPECT_NE(expandError("{1 +}").find("missing operand"), std::string::npos);
  EXPECT_NE(expandError("{pow(2, 3)}").find("unknown function"), std::string::npos);
  EXPECT_NE(expandError("{9223372036854775807 + 1}").find("overflow"), std::string::npos);
  EXPECT_NE(expandError("{value").find("unclosed"), std::string::npos);
  EXPECT_NE(expandError("value}").find("unmatched"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
