// Password hashes: rftpd's scrypt format through real OpenSSL, with the RFC
// 7914 test vector so the encoding interoperates with any other scrypt; and
// crypt(3)'s formats through libxcrypt, with the SHA-crypt specification's
// vectors and a yescrypt hash made by mkpasswd.
#include "daemon/auth/password_hash.h"

#include <gtest/gtest.h>

#include <regex>

using namespace rftp::daemon;

namespace {

// RFC 7914 section 12, third vector: P="pleaseletmein", S="SodiumChloride",
// N=16384 (ln=14), r=8, p=1, dkLen=64.
const std::string kRfc7914Hash =
    "$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU=$"
    "cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofLVQylVYT8Pz2LUlwUkKpr55h6F3A1lHkDfzwF7RVdYhw==";

std::string with_params(const std::string &params) {
    return "$scrypt$" + params + "$U29kaXVtQ2hsb3JpZGU=$cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofI=";
}

}  // namespace

TEST(PasswordHash, NewScryptHashHasTheDocumentedShapeAndVerifies) {
    auto hash = hash_password("correct horse", HashFormat::scrypt);
    ASSERT_TRUE(hash) << hash.error().message;
    // 16-byte salt -> 24 base64 chars, 32-byte hash -> 44, standard alphabet with padding.
    EXPECT_TRUE(std::regex_match(*hash, std::regex(R"(\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=)")))
        << *hash;
    EXPECT_TRUE(check_hash_format(*hash));

    auto ok = verify_password("correct horse", *hash);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_TRUE(*ok);

    auto wrong = verify_password("correct horsE", *hash);
    ASSERT_TRUE(wrong) << wrong.error().message;
    EXPECT_FALSE(*wrong);

    auto empty = verify_password("", *hash);
    ASSERT_TRUE(empty);
    EXPECT_FALSE(*empty);
}

TEST(PasswordHash, SaltMakesEveryHashDifferent) {
    auto a = hash_password("same");
    auto b = hash_password("same");
    ASSERT_TRUE(a && b);
    EXPECT_NE(*a, *b);
}

TEST(PasswordHash, EmptyPasswordRoundTrips) {
    auto hash = hash_password("");
    ASSERT_TRUE(hash);
    auto ok = verify_password("", *hash);
    ASSERT_TRUE(ok);
    EXPECT_TRUE(*ok);
}

TEST(PasswordHash, VerifiesTheRfc7914TestVector) {
    auto ok = verify_password("pleaseletmein", kRfc7914Hash);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_TRUE(*ok);
    auto wrong = verify_password("pleaseletmeout", kRfc7914Hash);
    ASSERT_TRUE(wrong);
    EXPECT_FALSE(*wrong);
}

TEST(PasswordHash, MalformedHashesAreErrorsNotMismatches) {
    const std::string salt = "U29kaXVtQ2hsb3JpZGU=";
    const std::string hash = "cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofI=";
    const std::vector<std::string> bad = {
        "",
        "hunter2",                                                   // a plain password pasted by mistake
        "$scrypt$",
        "$2b$12$abcdefghijklmnopqrstuv",                             // a bcrypt salt without its hash
        "$6$saltstring",                                             // a sha512crypt salt without its hash
        "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/",                        // md5crypt: too weak
        "ab01FAX.bQRSU",                                             // DES crypt: too weak
        "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5", // sha256crypt: legacy to libxcrypt
        "$scrypt$ln=14,r=8,p=1$" + salt,                             // no hash part
        "$scrypt$ln=14,r=8,p=1$" + salt + "$" + hash + "$extra",     // one part too many
        "$scrypt$ln=14,r=8$" + salt + "$" + hash,                    // p missing
        "$scrypt$r=8,ln=14,p=1$" + salt + "$" + hash,                // wrong order
        "$scrypt$ln=x,r=8,p=1$" + salt + "$" + hash,
        "$scrypt$ln=14,r=8,p=1$" + salt + "$" + hash + " ",          // trailing space
        "$scrypt$ln=14,r=8,p=1$ " + salt + "$" + hash,               // space in base64
        "$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU$" + hash,         // missing padding
        "$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGV=$" + hash,        // non-canonical last char
        "$scrypt$ln=14,r=8,p=1$U29k-XVtQ2hsb3JpZGU=$" + hash,        // URL-safe alphabet
        "$scrypt$ln=14,r=8,p=1$AAAA$" + hash,                        // 3-byte salt
        "$scrypt$ln=14,r=8,p=1$" + salt + "$AAAA",                   // 3-byte hash
    };
    for (const auto &encoded : bad) {
        auto format = check_hash_format(encoded);
        EXPECT_FALSE(format) << "accepted: " << encoded;
        auto verified = verify_password("pleaseletmein", encoded);
        EXPECT_FALSE(verified) << "verified without error: " << encoded;
        if (!verified) {
            EXPECT_EQ(verified.error().code, -EINVAL);
            // Never echo the hash text: it might be a password.
            EXPECT_EQ(verified.error().message.find("hunter2"), std::string::npos);
        }
    }
}

TEST(PasswordHash, CostParametersAreBounded) {
    // Within bounds: parse fine (the hash simply does not match).
    EXPECT_TRUE(check_hash_format(with_params("ln=10,r=1,p=1")));
    EXPECT_TRUE(check_hash_format(with_params("ln=16,r=8,p=2")));
    // Outside: refused before any work is done, so a hostile config cannot
    // make a login take minutes or gigabytes.
    for (const char *params : {"ln=9,r=8,p=1", "ln=21,r=8,p=1", "ln=30,r=8,p=1", "ln=15,r=0,p=1",
                               "ln=15,r=33,p=1", "ln=15,r=8,p=0", "ln=15,r=8,p=17",
                               "ln=20,r=8,p=1",      // 1 GiB of memory
                               "ln=16,r=16,p=16",    // 2^24 work
                               "ln=99999999999999999999,r=8,p=1"}) {
        auto status = check_hash_format(with_params(params));
        EXPECT_FALSE(status) << params;
        auto verified = verify_password("x", with_params(params));
        EXPECT_FALSE(verified) << params;
    }
}

TEST(PasswordHash, NewHashesAreYescryptAndVerify) {
    auto hash = hash_password("correct horse");
    ASSERT_TRUE(hash) << hash.error().message;
    EXPECT_TRUE(hash->starts_with("$y$")) << *hash;
    EXPECT_TRUE(check_hash_format(*hash));
    auto ok = verify_password("correct horse", *hash);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_TRUE(*ok);
    auto wrong = verify_password("correct horsE", *hash);
    ASSERT_TRUE(wrong);
    EXPECT_FALSE(*wrong);
    auto again = hash_password("correct horse");
    ASSERT_TRUE(again);
    EXPECT_NE(*hash, *again);
}

// Hashes as /etc/shadow, mkpasswd and openssl passwd make them.
TEST(PasswordHash, VerifiesCryptHashesMadeElsewhere) {
    struct Vector {
        const char *password, *hash;
    };
    const Vector vectors[] = {
        // SHA-crypt specification (Drepper): sha512crypt's first and second vectors.
        {"Hello world!", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
        {"Hello world!", "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."},
        // echo secret | mkpasswd -m yescrypt -s
        {"secret", "$y$j9T$J0VUjTmFzB3tDjKmTI6uo.$i7AAWXA6bgHTKEfeZTvuxWKhngeTenbUousQ09DXvD1"},
    };
    for (const Vector &v : vectors) {
        EXPECT_TRUE(check_hash_format(v.hash)) << v.hash;
        auto ok = verify_password(v.password, v.hash);
        ASSERT_TRUE(ok) << v.hash << ": " << ok.error().message;
        EXPECT_TRUE(*ok) << v.hash;
        auto wrong = verify_password("Hello world?", v.hash);
        ASSERT_TRUE(wrong);
        EXPECT_FALSE(*wrong) << v.hash;
    }
}

TEST(PasswordHash, CryptCostsAreBounded) {
    // A mistyped or hostile cost would make every login take minutes.
    for (const char *hash : {"$6$rounds=999999999$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1",
                             "$2b$31$abcdefghijklmnopqrstuuPbvoKmG6f7cgqOCXnNbmTq9wVkIShhW",
                             // yescrypt with N = 2^18, r = 32: 1 GiB a login
                             "$y$jFT$J0VUjTmFzB3tDjKmTI6uo.$i7AAWXA6bgHTKEfeZTvuxWKhngeTenbUousQ09DXvD1"}) {
        auto status = check_hash_format(hash);
        ASSERT_FALSE(status) << hash;
        EXPECT_NE(status.error().message.find("above"), std::string::npos) << status.error().message;
    }
}

TEST(PasswordHash, AnOverlongPasswordIsAWrongOneNotABrokenHash) {
    // libxcrypt takes at most 511 bytes; a client may send up to a line's length.
    auto verified = verify_password(std::string(600, 'x'), "$y$j9T$J0VUjTmFzB3tDjKmTI6uo.$i7AAWXA6bgHTKEfeZTvuxWKhngeTenbUousQ09DXvD1");
    ASSERT_TRUE(verified) << verified.error().message;
    EXPECT_FALSE(*verified);
}
