#include "protocol/time_val.h"

#include <cctype>
#include <ctime>

namespace rftp::ftp {
namespace {

// digits characters of text from at, as a number; -1 when one is no digit.
int digits_at(std::string_view text, std::size_t at, std::size_t digits) {
    int value = 0;
    for (std::size_t i = at; i < at + digits; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

bool is_leap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

std::optional<uint32_t> parse_fraction(std::string_view fraction) {
    if (fraction.empty()) return 0;
    if (fraction[0] != '.' || fraction.size() < 2 || fraction.size() > 10) return std::nullopt;
    uint32_t nanos = 0;
    for (std::size_t i = 1; i < 10; ++i) {
        uint32_t digit = 0;
        if (i < fraction.size()) {
            if (!std::isdigit(static_cast<unsigned char>(fraction[i]))) return std::nullopt;
            digit = static_cast<uint32_t>(fraction[i] - '0');
        }
        nanos = nanos * 10 + digit;
    }
    return nanos;
}

}  // namespace

std::optional<TimeVal> parse_time_val(std::string_view text) {
    if (text.size() < 14) return std::nullopt;
    const int year = digits_at(text, 0, 4), month = digits_at(text, 4, 2), day = digits_at(text, 6, 2);
    const int hour = digits_at(text, 8, 2), minute = digits_at(text, 10, 2), second = digits_at(text, 12, 2);
    if (year < 1970 || month < 1 || month > 12 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > 60)
        return std::nullopt;
    if (day < 1 || day > days_in_month(year, month)) return std::nullopt;
    auto nanos = parse_fraction(text.substr(14));
    if (!nanos) return std::nullopt;
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second == 60 ? 59 : second;
    return TimeVal{static_cast<int64_t>(::timegm(&tm)), *nanos};
}

std::string format_time_val(int64_t seconds) {
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
    return buf;
}

}  // namespace rftp::ftp
