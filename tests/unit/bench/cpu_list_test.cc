// CPU lists: the taskset syntax, its errors, CPUs this process may not use, and pinning a thread.
#include "cpu_list.h"

#include <gtest/gtest.h>

#include <thread>

namespace sp::bench {
namespace {

CpuList parse(const std::string& text) {
  CpuList out;
  std::string error;
  EXPECT_TRUE(parseCpuList(text, &out, &error)) << text << ": " << error;
  return out;
}

TEST(CpuListTest, NumbersRangesAndLists) {
  EXPECT_EQ(parse("0"), (CpuList{0}));
  EXPECT_EQ(parse("1-3"), (CpuList{1, 2, 3}));
  EXPECT_EQ(parse("0,2"), (CpuList{0, 2}));
  EXPECT_EQ(parse("4-5,0,2-2"), (CpuList{0, 2, 4, 5}));
  EXPECT_EQ(parse("3,1,3,1-2"), (CpuList{1, 2, 3}));  // sorted, without duplicates
  EXPECT_EQ(parse("1023"), (CpuList{1023}));
}

TEST(CpuListTest, BadSyntaxIsAnErrorNamingTheText) {
  for (const char* bad : {"", ",", "1,", ",1", "0,,1", "1-", "-1", "3-1", "a", "1a", " 1", "1 ",
                          "1-2-3", "0x1", "+1", "1024", "99999999999"}) {
    CpuList out = {7};
    std::string error;
    EXPECT_FALSE(parseCpuList(bad, &out, &error)) << "'" << bad << "'";
    EXPECT_NE(error.find("invalid CPU list '" + std::string(bad) + "'"), std::string::npos)
        << error;
    EXPECT_NE(error.find("such as 0, 1-3 or 0,2"), std::string::npos) << error;
    EXPECT_EQ(out, (CpuList{7})) << "left alone on error";
  }
}

TEST(CpuListTest, FormatAndDescribe) {
  EXPECT_EQ(formatCpuList({0}), "0");
  EXPECT_EQ(formatCpuList({0, 1}), "0,1");
  EXPECT_EQ(formatCpuList({0, 1, 2, 5}), "0-2,5");
  EXPECT_EQ(formatCpuList({0, 2, 3, 4, 6, 7}), "0,2-4,6,7");
  EXPECT_EQ(formatCpuList({}), "");
  EXPECT_EQ(describeCpus({0}), "CPU 0");
  EXPECT_EQ(describeCpus({1, 2, 3}), "CPUs 1-3");
  EXPECT_EQ(describeCpus({0, 2}), "CPUs 0,2");
  for (const char* text : {"0", "0-2,5", "1,3", "0,2-4,6,7"}) {
    EXPECT_EQ(formatCpuList(parse(text)), text);
  }
}

TEST(CpuListTest, CommonCpus) {
  EXPECT_EQ(commonCpus({0, 1, 2}, {1, 2, 3}), (CpuList{1, 2}));
  EXPECT_EQ(commonCpus({0}, {1}), CpuList{});
  EXPECT_EQ(commonCpus({}, {1}), CpuList{});
}

TEST(CpuListTest, FlagsNameTheFlagAndTheCpusThatAreMissing) {
  const CpuList allowed = {0, 1};
  CpuList out;
  std::string error;
  EXPECT_TRUE(parseCpuFlag("--proxy-cpus", "0-1", allowed, &out, &error)) << error;
  EXPECT_EQ(out, (CpuList{0, 1}));

  EXPECT_FALSE(parseCpuFlag("--shard-cpus", "1-3", allowed, &out, &error));
  EXPECT_EQ(error,
            "--shard-cpus 1-3: CPUs 2,3 are not available here (this process may run on CPUs "
            "0,1)");
  EXPECT_FALSE(parseCpuFlag("--client-cpus", "7", allowed, &out, &error));
  EXPECT_EQ(error,
            "--client-cpus 7: CPU 7 is not available here (this process may run on CPUs 0,1)");
  EXPECT_FALSE(parseCpuFlag("--proxy-cpus", "0-", allowed, &out, &error));
  EXPECT_EQ(error.rfind("--proxy-cpus: invalid CPU list '0-'", 0), 0u) << error;
}

TEST(CpuListTest, AllowedCpusAreThisProcesssAndPinningAThreadTakesEffect) {
  const CpuList allowed = allowedCpus();
  ASSERT_FALSE(allowed.empty());
  // On another thread, so this one keeps its mask.
  CpuList seen;
  std::string error;
  bool ok = false;
  std::thread t([&] {
    ok = pinCurrentThread({allowed.front()}, &error);
    seen = allowedCpus();
  });
  t.join();
  EXPECT_TRUE(ok) << error;
  EXPECT_EQ(seen, (CpuList{allowed.front()}));
  EXPECT_EQ(allowedCpus(), allowed);
  EXPECT_TRUE(pinCurrentThread({}, &error));  // empty: leaves the thread alone
  EXPECT_EQ(allowedCpus(), allowed);
}

}  // namespace
}  // namespace sp::bench
