#include "master/scheduler/md5.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace det::master::scheduler {
namespace {

std::string Hex(const Md5Digest& d) {
  std::string out;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

// RFC 1321 test suite.
TEST(Md5Test, RfcVectors) {
  EXPECT_EQ(Hex(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(Md5("a")), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(Hex(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Hex(Md5("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(Hex(Md5("12345678901234567890123456789012345678901234567890123456789012345678901234"
                    "567890")),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5Test, PrefixIsLittleEndian) {
  // md5("") = d4 1d 8c d9 8f 00 b2 04 ...
  EXPECT_EQ(Md5Prefix64(""), 0x04b2008fd98c1dd4ULL);
}

}  // namespace
}  // namespace det::master::scheduler
