// The JSON structure scanner every reader of JSON text in opscope uses: it finds where a value
// ends (strings, objects, arrays and scalars) without parsing it. simdjson parses; this only
// delimits, which is what a streaming reader needs to cut events out of a large text
// (analysis/json_stream.h), and what a reader of one stored args object needs to find one key
// (Trace::FindArg).
//
// Containers are scanned 64 bytes at a time where a block holds no backslash: string interiors
// from the parity of quotes (a carry-less multiply), brackets outside strings checked against a
// stack, so a mismatched bracket is found where it is. The block kernel is compiled for SSE2, AVX2
// and AVX-512BW and picked per CPU at run time (json_scan_kernel.inc); every kernel gives the same
// answers, which the tests check on each one the CPU runs.
//
// No function reads outside [text, text + end): callers need no padding.
//
// Thread safety: all functions are pure.
#ifndef OPSCOPE_BASE_JSON_SCAN_H_
#define OPSCOPE_BASE_JSON_SCAN_H_

#include <cstddef>
#include <string_view>

namespace opscope::internal {

// The scanner's instruction set: kAuto picks the widest this CPU runs. The others exist so tests
// can check each kernel against the same inputs.
enum class JsonScanKernel { kAuto, kGeneric, kAvx2, kAvx512 };
// Whether this CPU runs `kernel` (kAuto and kGeneric always).
bool JsonScanKernelSupported(JsonScanKernel kernel);
// `kernel` when this CPU runs it and it is not kAuto; else the widest kernel the CPU runs.
JsonScanKernel ResolveJsonScanKernel(JsonScanKernel kernel);

// What ScanContainer found.
struct ContainerScan {
  enum What { kComplete, kIncomplete, kTooDeep, kMismatch } what;
  size_t at;       // kComplete: one past the value; kTooDeep/kMismatch: the offending bracket
  int depth;       // open brackets left (stack[depth - 1] is the innermost)
  bool in_string;  // kIncomplete: the text ended inside a string
};

// Scans p[i, end) inside the object or array whose opening brackets so far are stack[0, depth)
// ('{' or '['; depth >= 1), until its last bracket closes. `stack` holds at least max_depth
// bytes; a bracket that would open level max_depth + 1 is kTooDeep. `kernel` must be resolved
// (not kAuto).
ContainerScan ScanContainer(JsonScanKernel kernel, const char* p, size_t i, size_t end, char* stack,
                            int max_depth, int depth);

inline constexpr size_t kJsonNoEnd = static_cast<size_t>(-1);

// One past the '"' that closes the string whose interior starts at p[i] (the byte after its
// opening quote), or kJsonNoEnd when p[i, end) ends first.
size_t JsonStringEnd(const char* p, size_t i, size_t end);

// True for the bytes that end a bare scalar (number, true, false, null): whitespace , : } ].
inline bool EndsJsonScalar(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',' || c == '}' || c == ']' ||
         c == ':';
}
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// One past the JSON value that starts at text[i] (a string, object, array or scalar), or
// kJsonNoEnd when it does not end inside `text`, its brackets do not match, or text[i] cannot start
// a value. Scalars are delimited, not validated.
size_t JsonValueEnd(std::string_view text, size_t i);

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_JSON_SCAN_H_
