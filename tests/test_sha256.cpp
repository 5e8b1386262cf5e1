// SHA-256 against the FIPS 180-4 / NIST example vectors, including inputs that need one and two padding
// blocks.
#include <gtest/gtest.h>

#include <string>

#include "sha256.hpp"

namespace labrun {
namespace {

TEST(Sha256, EmptyString) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) { EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"); }

TEST(Sha256, TwoBlockMessage448Bits) {
  // 56 bytes: the length no longer fits in the first block, so padding spills into a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, OneMillionA) {
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, BinaryBytesAreHashedAsIs) {
  // Embedded NUL and high bytes must not be treated as text; reference from `printf 'a\0\377' | sha256sum`.
  EXPECT_EQ(sha256_hex(std::string("a\0\xff", 3)), "2d28501a66adef190c7f5b220994e76d5cc30f1eb165a8ca6cab56dfd57092fe");
}

}  // namespace
}  // namespace labrun
