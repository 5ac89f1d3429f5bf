// The canonical JSON form of a Parquet file's contents, written the same way by opscope's reader
// (here) and by npm's hyparquet (canonical_dump.mjs), so that the conformance test can compare the
// two readers' output byte for byte. docs/parquet.md, "Conformance", defines the form:
//
//   {"file":"x.parquet","rows":3,"columns":[{"path":"a","type":"INT32","converted":null,
//    "logical":null,"max_def":1,"max_rep":0}, ...]}          <- first line: the schema's leaves
//   {"a":1,"b":{"list":[{"element":"6162"}]}}                <- then one line per row
//
// Rows are the physical records (record_assembly.h): groups as objects in schema order, repeated
// fields as arrays, absent optional fields as null, LIST / MAP groups as stored. Values by
// physical type: BOOLEAN true/false; INT32 a number; INT64 a decimal string; INT96 the
// nanoseconds since the Unix epoch it encodes ((Julian day - 2440588) * 86400 * 10^9 + the signed
// nanoseconds of the day), a decimal string; FLOAT / DOUBLE as JavaScript
// prints the double (float widened) with "NaN", "Infinity", "-Infinity", "-0" as strings;
// BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY lowercase hex strings.
#ifndef OPSCOPE_TESTS_IMPORT_PARQUET_CANONICAL_JSON_H_
#define OPSCOPE_TESTS_IMPORT_PARQUET_CANONICAL_JSON_H_

#include <string>

#include "import/parquet/read_options.h"
#include "opscope/status.h"

namespace opscope::parquet {

// Reads the file at `path` (every column, every row group, on options.threads threads) and
// writes its canonical form into *out ("file" is `path`'s base name).
Status CanonicalJson(const std::string& path, const ReadOptions& options, std::string* out);

// A double as JavaScript's Number.prototype.toString prints it (shortest round-trip digits).
std::string JsNumber(double v);

}  // namespace opscope::parquet

#endif  // OPSCOPE_TESTS_IMPORT_PARQUET_CANONICAL_JSON_H_
