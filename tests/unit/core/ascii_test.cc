// Case folding of command names: ASCII only, every byte compared.
#include "core/ascii.h"

#include <gtest/gtest.h>

namespace sp {
namespace {

TEST(AsciiTest, LowerFoldsOnlyAsciiCapitals) {
  EXPECT_EQ(lowerAscii('A'), 'a');
  EXPECT_EQ(lowerAscii('Z'), 'z');
  EXPECT_EQ(lowerAscii('a'), 'a');
  EXPECT_EQ(lowerAscii('@'), '@');  // just before 'A'
  EXPECT_EQ(lowerAscii('['), '[');  // just after 'Z'
  EXPECT_EQ(lowerAscii('\xC9'), '\xC9');
}

TEST(AsciiTest, UpperFoldsOnlyAsciiLetters) {
  EXPECT_EQ(upperAscii('a'), 'A');
  EXPECT_EQ(upperAscii('z'), 'Z');
  EXPECT_EQ(upperAscii('`'), '`');  // just before 'a'
  EXPECT_EQ(upperAscii('{'), '{');  // just after 'z'
  EXPECT_EQ(upperAscii('\xE9'), '\xE9');
  EXPECT_EQ(upperAscii(std::string_view("config|Set-x1")), "CONFIG|SET-X1");
  EXPECT_EQ(upperAscii(std::string_view("")), "");
}

TEST(AsciiTest, EqualsIgnoreCase) {
  EXPECT_TRUE(equalsIgnoreCase("SETINFO", "setinfo"));
  EXPECT_TRUE(equalsIgnoreCase("SetInfo", "sETiNFO"));
  EXPECT_TRUE(equalsIgnoreCase("", ""));
  EXPECT_FALSE(equalsIgnoreCase("setinfo", "setinf"));
  EXPECT_FALSE(equalsIgnoreCase("lib-name", "lib_name"));
  EXPECT_FALSE(equalsIgnoreCase("@", "`"));  // 0x40 and 0x60 differ by the case bit, not letters
}

}  // namespace
}  // namespace sp
