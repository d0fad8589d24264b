#include "master/core/uuid_check.h"

#include <gtest/gtest.h>

namespace det::master::core {
namespace {

TEST(UuidCheck, AcceptsUuidsInEitherCase) {
  EXPECT_TRUE(IsUuid("0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"));
  EXPECT_TRUE(IsUuid("0B9C5A0E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"));
  EXPECT_TRUE(CheckCheckpointUuid("0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b").ok());
}

TEST(UuidCheck, RefusesPathsAndNearMisses) {
  for (const char* bad :
       {"", "..", "../../x", "..%2F..%2Fx", "/etc/passwd", "a/b", "ckpt-1",
        "0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5", "0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5bb",
        "0b9c5a0e_1c2d-4e5f-8a9b-0c1d2e3f4a5b", "0b9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5/",
        "zb9c5a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}) {
    EXPECT_FALSE(IsUuid(bad)) << bad;
  }
  Status st = CheckCheckpointUuid("../../x", "checkpointUuids");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("checkpointUuids"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("\"../../x\""), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("8-4-4-4-12"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace det::master::core
