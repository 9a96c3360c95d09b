// Status: ok by default, a failure carries its message, within() puts the step before it and
// leaves ok alone.
#include "core/status.h"

#include <gtest/gtest.h>

namespace sp {
namespace {

TEST(StatusTest, ADefaultStatusIsOkWithNoMessage) {
  const Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.message(), "");
}

TEST(StatusTest, AFailureCarriesItsMessage) {
  const Status status = Status::failure("bind 127.0.0.1:6380: Address already in use");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "bind 127.0.0.1:6380: Address already in use");
}

TEST(StatusTest, AFailureWithAnEmptyMessageIsStillAFailure) {
  EXPECT_FALSE(Status::failure("").ok());
}

TEST(StatusTest, WithinPutsTheStepBeforeTheMessage) {
  const Status status = Status::failure("cannot load certificate /etc/x.crt").within("tls");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "tls: cannot load certificate /etc/x.crt");
  const Status ok = Status().within("tls");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(StatusTest, AssignmentReplacesTheOutcome) {
  Status status = Status::failure("first");
  status = Status();
  EXPECT_TRUE(status.ok());
  status = Status::failure("second");
  EXPECT_EQ(status.message(), "second");
}

}  // namespace
}  // namespace sp
