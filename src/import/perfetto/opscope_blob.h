// The "opscope" metadata entry a Perfetto trace written by opscope carries (a ChromeMetadata
// json_value, first in the file): what the model holds that Perfetto has no field for, so that a
// converted trace imports back to the same model. docs/formats.md ("Perfetto") gives its keys;
// src/profiler/perfetto_writer.cc writes it.
#ifndef OPSCOPE_IMPORT_PERFETTO_OPSCOPE_BLOB_H_
#define OPSCOPE_IMPORT_PERFETTO_OPSCOPE_BLOB_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::perfetto {

struct OpscopeBlob {
  int64_t version = 0;
  // TraceMetadata, whole.
  int64_t schema_version = 1;
  int64_t base_time_ns = 0;
  // The model's ts_ns = the primary clock's ns - time_shift_ns (the writer shifts negative
  // timestamps up, Perfetto's are unsigned).
  int64_t time_shift_ns = 0;
  std::string device_type;
  std::string trace_name;
  std::vector<std::pair<std::string, std::string>> extra;  // key, raw JSON value
  std::vector<std::pair<std::string, uint64_t>> dropped;
  uint64_t skipped_events = 0;
  std::vector<std::string> warnings;

  struct Process {
    uint64_t uuid = 0;
    int64_t pid = 0;
    std::string pid_text, name, labels;
    int64_t sort_index = 0;
    bool is_device = false;
  };
  struct Track {
    uint64_t uuid = 0;
    uint64_t process_uuid = 0;
    int64_t tid = 0;
    std::string tid_text, name;
    int64_t sort_index = 0;
    TrackKind kind = TrackKind::kThread;
  };
  std::vector<Process> processes;  // in the model's order
  std::vector<Track> tracks;       // in the model's order
  // Perfetto tracks that hold slices of another track (overlapping slices that do not nest):
  // (lane uuid, track uuid).
  std::vector<std::pair<uint64_t, uint64_t>> lanes;
  // The activity kind of each category's slices (slices of another kind say so themselves).
  std::vector<std::pair<std::string, ActivityKind>> kinds;
  // The category and name of flows not listed in `flows`.
  std::string flow_category, flow_name;
  struct Flow {
    uint64_t ordinal = 0;  // the Perfetto flow id without kListedFlowBit
    uint64_t id = 0;
    std::string category, name;
  };
  std::vector<Flow> flows;
};

// Parses the blob's JSON text. "" or what is wrong with it.
std::string ParseOpscopeBlob(std::string_view json, OpscopeBlob* out);

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_OPSCOPE_BLOB_H_
