#include "cli/password.h"

#include <gtest/gtest.h>

namespace det::cli {
namespace {

// The client hash is sha512_hex(salt + password); the empty password is sent as "".
TEST(PasswordTest, Hashing) {
  EXPECT_EQ(HashPasswordForLogin(""), "");
  EXPECT_EQ(Sha512Hex("GubPEmmotfiK9TMD6Zdw"),
            "2a79f489dccb7c85f3f65fd91523310f684015b22c89e0f04b9ce292bc4ff17d751a4c8bffe57c0a8fc8"
            "98ae2479ade92e206f4c86e4a01b21de64fd3a60b011");
  EXPECT_EQ(HashPasswordForLogin("secret"),
            "f6b1a15b3e3f6c5978ad185a85efc1c91f2da442e66c4ce48b12a36b5b4c04a4dbfe79f4fe07bf1eb001"
            "6e63d7613827e4c0ed3c8e3c305755792a556866a723");
}

}  // namespace
}  // namespace det::cli
