// What a client sends reaches the log and the terminal as text that shows
// and is not obeyed: control bytes escaped, and (for the journal, which
// turns a message with one invalid byte into "[N blob data]", hiding it)
// every byte that is not well-formed UTF-8.
#include "common/log.h"

#include <gtest/gtest.h>

using rftp::log::printable;
using rftp::log::quote;

TEST(LogText, ControlBytesAreShownNotObeyed) {
    EXPECT_EQ(printable("a\x1b[2Jb\r"), "a\\x1b[2Jb\\x0d");
    EXPECT_EQ(quote("a b"), "\"a b\"");
    EXPECT_EQ(quote("plain"), "plain");
}

TEST(LogText, WellFormedUtf8PassesAsItIs) {
    EXPECT_EQ(printable("Grüße, 日本, 🧪"), "Grüße, 日本, 🧪");
    EXPECT_EQ(quote("Grüße"), "\"Grüße\"");
}

TEST(LogText, BytesThatAreNoUtf8AreEscaped) {
    EXPECT_EQ(printable("a\x80" "b"), "a\\x80b");           // a stray continuation byte
    EXPECT_EQ(printable("\xc3"), "\\xc3");                    // cut short
    EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
    EXPECT_EQ(printable("\xc2\x85"), "\\xc2\\x85");           // NEL, a C1 control
    EXPECT_EQ(printable("\xf8\x88\x80"), "\\xf8\\x88\\x80");  // no lead byte of UTF-8 (F5..FF)
    EXPECT_EQ(quote("u\x80"), "\"u\\x80\"");
}
