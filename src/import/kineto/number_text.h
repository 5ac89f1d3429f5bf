// Exact conversions of JSON number text, for timestamps that must not pick up floating error.
#ifndef OPSCOPE_IMPORT_KINETO_NUMBER_TEXT_H_
#define OPSCOPE_IMPORT_KINETO_NUMBER_TEXT_H_

#include <cstdint>
#include <string_view>

namespace opscope::import {

// Parses a JSON number of microseconds ("123.456", "1694039968955744", "-2", "1.5e3") into
// nanoseconds, exactly for plain decimals: digits past the sixth decimal round the picosecond,
// then the picoseconds round to the nanosecond, both half up (number_text.cc says why).
// Returns false when the text is not a JSON number or the value does not fit in int64 ns.
bool ParseMicrosToNanos(std::string_view text, int64_t* ns);
// The same, for text inside a padded buffer: may read up to 8 bytes past its end (a simdjson
// buffer guarantees 64).
bool ParseMicrosToNanosPadded(std::string_view text, int64_t* ns);

// Parses a JSON integer ("17", "-3"); also accepts an integral float ("17.0"). False otherwise.
bool ParseInt64(std::string_view text, int64_t* value);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_NUMBER_TEXT_H_
