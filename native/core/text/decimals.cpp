#include "decimals.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace sable {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return unsigned(c - '0') < 10; }

// 10^0 .. 10^22 are exact doubles: one multiplication or division by them rounds once.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

constexpr double kNegPow10[] = {1e-0,  1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,  1e-10, 1e-11,
                                1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22};

// The value of eight ASCII digits at p, or -1 when one of them is not a digit. One load and
// three multiplications: a 17-digit number takes two of these, not seventeen dependent steps.
int64_t eight_digits(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if (((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) != 0x3333333333333333ull)
    return -1;
  v = (v & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
  v = (v & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
  return int64_t(uint32_t((v & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32));
}

// Reads digits from t[i] into `mantissa` while it stays below 10^19; digits past that are
// counted in `dropped`. Returns the index after the last digit.
size_t read_digits(const char* t, size_t size, size_t i, uint64_t& mantissa, int64_t& dropped) {
  while (i + 8 <= size && mantissa < 100000000000ull) {
    const int64_t eight = eight_digits(t + i);
    if (eight < 0) break;
    mantissa = mantissa * 100000000 + uint64_t(eight);
    i += 8;
  }
  for (; i < size && is_digit(t[i]); ++i) {
    if (mantissa < 1000000000000000000ull) mantissa = mantissa * 10 + uint64_t(t[i] - '0');
    else ++dropped;
  }
  return i;
}

struct Number {
  size_t end = 0;  // after the number; 0 when the text is not a JSON number
  bool negative = false;
  uint64_t mantissa = 0;  // the leading digits (below 10^19)
  int64_t exponent = 0;   // value = mantissa * 10^exponent, up to the dropped digits
  bool truncated = false;
};

// One JSON number from t[i], its grammar checked (no '+', no leading zero, digits on both sides
// of '.', digits in an exponent) as its digits are read.
Number read_number(const char* t, size_t size, size_t i) {
  Number n;
  if (i < size && t[i] == '-') {
    n.negative = true;
    ++i;
  }
  const size_t int_start = i;
  int64_t dropped = 0;
  i = read_digits(t, size, i, n.mantissa, dropped);
  if (i == int_start || (i - int_start > 1 && t[int_start] == '0')) return n;
  int64_t exponent = dropped;
  if (i < size && t[i] == '.') {
    const size_t frac_start = ++i;
    int64_t frac_dropped = 0;
    i = read_digits(t, size, i, n.mantissa, frac_dropped);
    if (i == frac_start) return n;
    exponent -= int64_t(i - frac_start) - frac_dropped;
    dropped += frac_dropped;
  }
  if (i < size && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < size && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
    const size_t exp_start = i;
    int64_t e = 0;
    for (; i < size && is_digit(t[i]); ++i)
      if (e < 100000) e = e * 10 + (t[i] - '0');
    if (i == exp_start) return n;
    exponent += negative ? -e : e;
  }
  n.exponent = exponent;
  n.truncated = dropped > 0;
  n.end = i;
  return n;
}

// The float JSON.parse and a float32 conversion give: the nearest double, then the nearest
// float. Exact when the digits fit a double and the power of ten is exact (one rounding, Clinger's
// fast path). Otherwise the double is within 2^-50 of the number (the digits, the reciprocal and
// the product each rounded once), which settles the float unless it lies that close to a
// midpoint between two floats: then false, and from_chars decides.
bool to_float(const Number& n, float& out) {
  if (n.mantissa == 0) {
    out = n.negative ? -0.0f : 0.0f;
    return true;
  }
  if (n.exponent < -22 || n.exponent > 22) return false;
  const double m = double(n.mantissa);
  const bool exact = !n.truncated && n.mantissa <= (uint64_t(1) << 53);
  // Inexact anyway: a multiplication by the rounded reciprocal (one more rounding, inside the
  // margin below) instead of a division.
  const double d = n.exponent >= 0 ? m * kPow10[n.exponent] : exact ? m / kPow10[-n.exponent] : m * kNegPow10[-n.exponent];
  if (!exact) {
    // Rounding a double to float looks at the 29 low bits of its mantissa: the midpoint between
    // two floats is where they read 2^28. d is at most 4 units of its last place from the
    // correctly rounded double; 16 either side of the midpoint, or outside the range of normal
    // floats, is left to from_chars.
    const uint64_t bits = std::bit_cast<uint64_t>(d);
    const int64_t exponent = int64_t(bits >> 52) - 1023;
    if (exponent < -126 || exponent > 127) return false;
    const int64_t low = int64_t(bits & ((uint64_t(1) << 29) - 1)) - (int64_t(1) << 28);
    if (low > -16 && low < 16) return false;
  }
  const float f = float(d);
  out = n.negative ? -f : f;
  return true;
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
    const Number n = read_number(t, size, i);
    if (n.end == 0) return false;
    float f;
    if (!to_float(n, f)) {
      double d;
      // Correctly rounded; a number past the double range (rare) is left to the caller's reader.
      auto [ptr, ec] = std::from_chars(t + i, t + n.end, d);
      if (ec != std::errc() || ptr != t + n.end) return false;
      f = float(d);
    }
    out.push_back(f);
    i = n.end;
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
