// A real trace made larger for the benchmarks: its events repeated, each copy later in time and
// with ids of its own, so a size users hold (tens of MB) keeps a real trace's content (its mix of
// events, args, flows and number formats), which a generated trace does not have.
#ifndef OPSCOPE_BENCH_TILED_TRACE_H_
#define OPSCOPE_BENCH_TILED_TRACE_H_

#include <cstdint>
#include <string>

namespace opscope::bench {

// Writes `in_path`'s trace (plain JSON with a "traceEvents" array) to `out_path` with its events
// repeated `copies` times. Copy k has every "ts" moved k spans later (the span: last ts minus
// first, plus 1 ms), done on the number's text so fractional digits stay exactly as written, and
// its ids ("id", "External id", "correlation", "Python id", "Python parent id") moved by k times
// one more than the largest, so each copy keeps the original's nesting, flows and kernel links
// among its own events. Everything outside the array is written once, as it was. Returns the
// bytes written, or 0 (with a message on stderr) when the input cannot be read or has no array.
uint64_t WriteTiledTrace(const std::string& in_path, int copies, const std::string& out_path);

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_TILED_TRACE_H_
