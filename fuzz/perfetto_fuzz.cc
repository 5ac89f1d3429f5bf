// libFuzzer target for the Perfetto reader, fed straight (detection aside: a mutated first packet
// would otherwise go to the JSON reader): any bytes must give a finalized trace and an ok or error
// status that says what and where, never a crash, a hang or unbounded memory; the analyses must run
// on what was read. And the writer's invariant: what was read, written back as a Perfetto trace,
// reads back to the same processes, tracks, slices, instants and counters.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "import/import_input.h"
#include "import/perfetto/perfetto_reader.h"
#include "opscope/analysis.h"
#include "opscope/import.h"
#include "profiler/perfetto_writer.h"

namespace {

struct Read {
  opscope::Trace trace;
  opscope::ImportStats stats;
  opscope::Status status;
};

void ReadBytes(std::string_view data, Read* out) {
  opscope::ImportOptions options;
  options.max_depth = 32;
  options.threads = 1;
  std::unique_ptr<opscope::import::ImportInput> in = opscope::import::ImportInput::OpenMemory(data);
  out->status = opscope::import::ReadPerfetto(in.get(), &out->trace, &out->stats, options);
}

// Traps unless `b` holds what `a` holds (the model's own fields, not Perfetto's).
void CheckSame(const opscope::Trace& a, const opscope::Trace& b) {
  if (a.processes().size() != b.processes().size() || a.tracks().size() != b.tracks().size() ||
      a.slices().size() != b.slices().size() || a.instants().size() != b.instants().size() ||
      a.counters().size() != b.counters().size() ||
      a.metadata().base_time_ns != b.metadata().base_time_ns) {
    __builtin_trap();
  }
  for (size_t i = 0; i < a.slices().size(); ++i) {
    const opscope::Slice& x = a.slices()[i];
    const opscope::Slice& y = b.slices()[i];
    if (x.ts_ns != y.ts_ns || x.dur_ns != y.dur_ns || x.track != y.track || x.kind != y.kind ||
        x.external_id != y.external_id || x.correlation != y.correlation ||
        a.Str(x.name) != b.Str(y.name) || a.Str(x.category) != b.Str(y.category) ||
        a.Str(x.input_shapes) != b.Str(y.input_shapes)) {
      __builtin_trap();
    }
  }
  for (size_t i = 0; i < a.tracks().size(); ++i) {
    if (a.tracks()[i].tid != b.tracks()[i].tid || a.tracks()[i].kind != b.tracks()[i].kind ||
        a.Str(a.tracks()[i].name) != b.Str(b.tracks()[i].name)) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Read first;
  ReadBytes(input, &first);
  const opscope::Trace& trace = first.trace;
  if (!first.status.ok() && first.status.message().empty()) __builtin_trap();
  if (!trace.finalized()) __builtin_trap();
  for (const std::string& w : first.stats.warnings) {
    if (w.empty()) __builtin_trap();  // every warning says what and where
  }
  // The analyses on whatever was read.
  const opscope::DeviceTimeline tl = opscope::ComputeDeviceTimeline(trace, opscope::kNone, true);
  if (tl.busy_ns > tl.total_ns || tl.idle_ns < 0) __builtin_trap();
  (void)opscope::ComputeOpSummary(trace).ToJson();
  (void)opscope::ComputeKernelSummary(trace).ToJson();
  (void)opscope::ComputeLaunchStatistics(trace).ToJson();
  for (uint32_t i = 0; i < trace.slices().size() && i < 64; ++i) {
    (void)trace.FindArg(trace.slices()[i].args, "External id");
  }
  // Written back and read again: the same model.
  if (trace.slices().size() + trace.instants().size() + trace.counters().size() > 20000) return 0;
  const std::string bytes = opscope::internal::PerfettoTraceBytes(trace);
  Read again;
  ReadBytes(bytes, &again);
  if (!again.status.ok() || again.stats.skipped != 0) __builtin_trap();
  CheckSame(trace, again.trace);
  return 0;
}
