// Decimal numbers written as text (JSON's number grammar) read into float32 values. Request
// vectors arrive this way, and building a double array first and converting it cost more CPU
// than the rest of a request (bench/results/http.md).
#pragma once

#include <cstddef>
#include <vector>

namespace sable {

// Reads the bracketed list opening at text[open] ('['): numbers separated by commas, with
// optional whitespace, up to the closing ']'. Each value is the number rounded to the nearest
// double, then to float: what a JSON reader followed by a float32 conversion gives. On success
// `out` holds the values and `end` the index after ']'; false (out unspecified) when the list
// holds anything else or is not closed.
bool read_decimal_list(const char* text, size_t size, size_t open, std::vector<float>& out, size_t& end);

}  // namespace sable
