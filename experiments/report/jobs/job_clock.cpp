#include "experiments/report/jobs/job_clock.h"

#include <cstdlib>
#include <ctime>

namespace dtbench::report {
namespace {

// Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool digits(const std::string& s, size_t at, size_t n, int* value) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

bool unixSeconds(const std::string& text, double* seconds) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  // Up to the year 10000, where the YYYY-MM-DD form ends too (and an int64 of seconds is exact).
  constexpr double kLastUnixSecond = 253402300799;
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0 || value > kLastUnixSecond) return false;
  *seconds = value;
  return true;
}

}  // namespace

bool JobClock::parse(const std::string& text, double* seconds) {
  if (text.empty() || text == "Unknown" || text == "None" || text == "NaN" || text == "nan" || text == "NaT") {
    *seconds = std::nan("");
    return true;
  }
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const bool isTime = text.size() == 19 && digits(text, 0, 4, &year) && text[4] == '-' && digits(text, 5, 2, &month) &&
                      text[7] == '-' && digits(text, 8, 2, &day) && (text[10] == ' ' || text[10] == 'T') &&
                      digits(text, 11, 2, &hour) && text[13] == ':' && digits(text, 14, 2, &minute) &&
                      text[16] == ':' && digits(text, 17, 2, &second);
  if (!isTime) return unixSeconds(text, seconds);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  const int64_t naive = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
                        hour * 3600 + minute * 60 + second;
  const int64_t localHour = naive / 3600 - (naive % 3600 < 0);
  if (localHour != hour_) {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_isdst = -1;
    const std::time_t utc = std::mktime(&tm);
    hour_ = localHour;
    offset_ = localHour * 3600 - static_cast<int64_t>(utc);
  }
  *seconds = static_cast<double>(naive - offset_);
  return true;
}

}  // namespace dtbench::report
