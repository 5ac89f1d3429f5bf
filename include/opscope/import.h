// Import: turning a profile on disk into the trace model, whatever wrote it.
//
//   opscope::Trace trace;
//   opscope::ImportStats stats;
//   opscope::Status st = opscope::ImportTrace("rank-0.pt.trace.json.gz", &trace, &stats);
//   if (!st.ok()) { std::cerr << st.message() << "\n"; }  // `trace` still holds what was read
//   std::cout << opscope::TraceFormatName(stats.format) << ": " << trace.slices().size() << "\n";
//
// The format is detected by content, not by the file's name (DetectTraceFormat); each reader
// fills the same model (opscope/trace.h), so every analysis, view and export works on any of them.
// docs/import.md describes the pipeline of each reader; docs/formats.md what each takes from its
// format and what it leaves.
//
// Thread safety: every function may be called from several threads at once on different traces.
#ifndef OPSCOPE_IMPORT_H_
#define OPSCOPE_IMPORT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

// The formats opscope reads, each detected by its content.
enum class TraceFormat : uint8_t {
  kUnknown,
  kKinetoJson,  // torch.profiler / Kineto / Chrome trace JSON, plain or gzip
  kPerfetto,    // Perfetto protobuf trace (TracePacket stream), plain or gzip
  kXPlane,      // XLA's XSpace protobuf (*.xplane.pb: JAX, TensorFlow, XLA), plain or gzip
  kNsysSqlite,  // Nsight Systems' SQLite export (nsys export --type sqlite)
  // AWS Neuron (docs/neuron-profiles.md):
  kNeuronExplorer,  // a Neuron Explorer output directory of Parquet tables
  kTorchNeuron,     // a folder of a torch.profiler trace beside its run's Neuron Explorer profile
  kNeuronJson,      // the Neuron profiler's legacy JSON: a device profile, or system_profile.json
};

// The format's short name, as `opscope report` and the Python module print it: "kineto-json", ...
std::string_view TraceFormatName(TraceFormat format);

// The most threads an import (ImportOptions::threads), an analysis (ReportOptions::threads) or a
// job's import runs: a larger count runs on this many. More threads than cores gain nothing.
inline constexpr int kMaxThreads = 256;

struct ImportOptions {
  // Maximum JSON nesting depth inside one event (args objects nest); deeper input is an error.
  int max_depth = 64;
  // How many warning messages are kept in TraceMetadata::warnings / ImportStats::warnings (all
  // skipped events are counted regardless).
  size_t max_warning_messages = 20;
  // Keep each event's args object (needed for args display and shapes; costs memory).
  bool keep_args = true;
  // With keep_args, when set: only the events it returns true for keep their args, by the event's
  // kind and name (instants pass ActivityKind::kOther). For readers that need few
  // events' args (a job's summary reads only the collectives'): the rest are never stored. Must
  // answer by kind and name alone: it is asked once per kind and name in each chunk of events (a
  // few hundred KiB of JSON), not per event, from every import thread at once: thread-safe.
  std::function<bool(ActivityKind kind, std::string_view name)> keep_args_of;
  // Parse events in batches, one parser pass over many events (fast). false parses each event
  // alone; the result is the same, which the fuzz target checks.
  bool batch_events = true;
  // Threads that import events: 0 = the cores available that the machine's load leaves free (1
  // when fewer than 3 are), from the first 32 MiB of JSON on (a smaller trace imports on the
  // calling thread alone, which is faster there); 1 = the calling
  // thread alone; N >= 2 = the calling thread reads and parses, one thread turns events into the
  // model in stream order, N - 2 more parse. The result (trace, stats, warnings and their order)
  // is the same for every count. Counts above kMaxThreads run on kMaxThreads.
  int threads = 0;
  // With several threads, events are parsed in chunks of about this many bytes of JSON (tests set
  // it small to spread a small input over every thread).
  size_t chunk_bytes = size_t{256} << 10;
  // Called on the importing thread as the input is read: bytes of input read so far (compressed
  // bytes for gzip) and the input's size (0 when unknown). Empty: not called.
  std::function<void(uint64_t read_bytes, uint64_t total_bytes)> progress;
  // A profile that holds several ranks (a Neuron system profile of several hosts): import only
  // this part, one that ListTraceParts names ("INSTANCE": a host's events, its NeuronCores and
  // counters), or "INSTANCE/PID" (one worker process of it); empty imports every part as one
  // trace.
  std::string part;
  // How long a named pipe may go without a writer's first bytes (or its close) before the import
  // fails with kIoError ("a named pipe that no program wrote to within N s"): a pipe nobody writes
  // to would otherwise block forever. 0 waits as long as it takes (`opscope explore`, which serves
  // its loading progress meanwhile and stops on SIGTERM).
  int pipe_writer_wait_ms = 5000;
};

// What an import read. The counts name Kineto JSON's events; other readers count their own records
// in the same fields (a Perfetto packet, an XPlane event, a row of a table is an `event`).
struct ImportStats {
  TraceFormat format = TraceFormat::kUnknown;  // the format the content was read as
  uint64_t input_bytes = 0;     // bytes of the file as stored (compressed size for .gz)
  uint64_t json_bytes = 0;      // bytes of JSON text parsed (uncompressed; 0 for binary formats)
  uint64_t events = 0;          // entries of traceEvents seen
  uint64_t slices = 0;          // "X" events kept
  uint64_t instants = 0;        // "i"/"I" events kept
  uint64_t counters = 0;        // counter samples kept (one per series value)
  uint64_t flow_endpoints = 0;  // "s"/"f"/"t" events kept
  uint64_t metadata = 0;        // "M" events applied
  uint64_t skipped = 0;         // events skipped with a warning
  std::vector<std::string> warnings;  // the first few warning messages
  // Where the import's time went, wall seconds (steady clock) per stage, for benchmarks and scaling
  // models: `read_seconds` reading and scanning the JSON into batches of events (always one
  // thread, the caller's); `parse_seconds` parsing and translating the events the calling thread
  // imports itself (all of them with one thread; with threads the parse threads' share is not
  // counted); `merge_seconds` merging translated events into the model (one thread at a time,
  // summed); `finish_seconds` moving the staged slices into the model and Trace::Finalize.
  double read_seconds = 0;
  double parse_seconds = 0;
  double merge_seconds = 0;
  double finish_seconds = 0;
};

// Reads the profile at `path` in whichever format its content shows (DetectTraceFormat). For
// Kineto / Chrome trace JSON, plain or gzip (detected by magic bytes), the read is streaming:
// memory grows with the number of events, not with the text size. `out` is always finalized: on
// success it holds the whole trace; on failure it holds the events read before the error, so a
// truncated file still shows what it has. Errors: kNotFound / kIoError when the file cannot be
// opened or read (file() = path); kInvalidInput for corrupt gzip or JSON, with offset() = the
// byte offset in the uncompressed JSON and a message naming the file, the byte and, inside
// traceEvents, the entry index: "PATH: byte 1234: expected ',' or ']' after traceEvents entry 17,
// found 'x'".
// Events that cannot be used (wrong types, missing fields, invalid UTF-8) are skipped and counted
// in stats->skipped and TraceMetadata::skipped_events, with the first messages kept.
Status ImportTrace(const std::string& path, Trace* out, ImportStats* stats = nullptr,
                   const ImportOptions& options = {});
// The same from bytes in memory (plain JSON or a gzip stream); for tests and fuzzing.
Status ImportTraceFromMemory(std::string_view data, Trace* out, ImportStats* stats = nullptr,
                             const ImportOptions& options = {});

// The format of the profile at `path` (a file, or a folder that is one profile), from its content:
// kUnknown when it is none of them (or cannot be read). Reads at most the first few KiB (inflated
// when the file is gzip).
TraceFormat DetectTraceFormat(const std::string& path);
// The same for bytes in memory (the start of a file is enough).
TraceFormat DetectTraceFormatFromMemory(std::string_view head);

// The profiles `path` holds, in path order: a file is itself whatever its content (ImportTrace says
// what is wrong with it); a folder is searched recursively for files and folders DetectTraceFormat
// recognises, and for files whose name says they are profiles ("*.json.gz", "*.pt.trace.json",
// ...: listed even when their content is not recognised, so that a corrupt one gets its error
// rather than vanishing); a folder that is itself one profile is one entry, not searched further.
// Errors: kNotFound naming the path when it does not exist, is neither a file, a named pipe nor a
// folder, or is a folder holding no profile.
Status FindTraces(const std::string& path, std::vector<std::string>* traces);

// The parts of a profile that holds several ranks, in the order that numbers them (rank i is
// parts[i]): a Neuron system profile (Parquet or legacy JSON) whose events name two or more
// instances (`instance_id`: one per host) has one part per instance, sorted by name; every other
// profile has none (`parts` empty), and is one trace, as has anything that is not a regular file
// or a folder (a named pipe is never read here). ImportOptions::part reads one of them.
// Reads only what names the parts (the instance column; a JSON profile is parsed whole). Errors:
// the profile's own, as ImportTrace would give them.
Status ListTraceParts(const std::string& path, std::vector<std::string>* parts);

}  // namespace opscope

#endif  // OPSCOPE_IMPORT_H_
