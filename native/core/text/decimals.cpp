#include "decimals.h"

#include <charconv>
#include <system_error>

namespace sable {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of a number in JSON's grammar starting at i, or `size` + 1 when there is none:
// from_chars alone would also take "inf", "nan", "01" and "1.".
size_t number_end(const char* t, size_t size, size_t i) {
  const size_t bad = size + 1;
  if (i < size && t[i] == '-') ++i;
  const size_t int_start = i;
  while (i < size && is_digit(t[i])) ++i;
  if (i == int_start || (i - int_start > 1 && t[int_start] == '0')) return bad;
  if (i < size && t[i] == '.') {
    const size_t frac_start = ++i;
    while (i < size && is_digit(t[i])) ++i;
    if (i == frac_start) return bad;
  }
  if (i < size && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < size && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t exp_start = i;
    while (i < size && is_digit(t[i])) ++i;
    if (i == exp_start) return bad;
  }
  return i;
}

}  // namespace

bool read_decimal_list(const char* t, size_t size, size_t open, std::vector<float>& out, size_t& end) {
  out.clear();
  if (open >= size || t[open] != '[') return false;
  size_t i = open + 1;
  while (i < size && is_space(t[i])) ++i;
  if (i < size && t[i] == ']') {
    end = i + 1;
    return true;
  }
  for (;;) {
    while (i < size && is_space(t[i])) ++i;
    const size_t stop = number_end(t, size, i);
    if (stop > size) return false;
    double d;
    // Correctly rounded; a number past the double range (rare) is left to the caller's reader.
    auto [ptr, ec] = std::from_chars(t + i, t + stop, d);
    if (ec != std::errc() || ptr != t + stop) return false;
    out.push_back(static_cast<float>(d));
    i = stop;
    while (i < size && is_space(t[i])) ++i;
    if (i >= size) return false;
    if (t[i] == ']') {
      end = i + 1;
      return true;
    }
    if (t[i] != ',') return false;
    ++i;
  }
}

}  // namespace sable
