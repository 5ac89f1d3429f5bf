// The Neuron profiler's legacy JSON output (SDK up to 2.33; docs/neuron-profiles.md): a device
// profile ({"summary": [...], "instruction": [...]}, neuron-profile view --output-format json), and
// profiler 2.x's system_profile.json ("trace_events", "mem_usage", "cpu_util") with the
// device_profile_model_<id>.json files beside it. Read with simdjson's On-Demand parser, one
// document at a time, into the trace through NeuronTraceBuilder, as the Parquet reader does.
//
// Errors name the file, the byte offset and the key path ("instruction[17].timestamp"); what was
// read before an error stays. A document cut short (a truncated file) is read up to its last
// complete entry, then reported.
//
// Not thread-safe: one reader per import.
#ifndef OPSCOPE_IMPORT_NEURON_LEGACY_JSON_H_
#define OPSCOPE_IMPORT_NEURON_LEGACY_JSON_H_

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "import/neuron/explorer_profile.h"
#include "import/neuron/neuron_trace_builder.h"
#include "opscope/import.h"
#include "opscope/status.h"

namespace opscope::import::neuron {

// What a JSON document's first bytes say it is, by its top-level keys.
enum class LegacyJsonKind { kNone, kDevice, kSystem };
LegacyJsonKind LegacyJsonKindOf(std::string_view head);

// The file names profiler 2.x writes.
inline constexpr std::string_view kSystemProfileFile = "system_profile.json";
inline constexpr std::string_view kDeviceProfilePrefix = "device_profile_model_";

// The whole file at `path` (kIoError naming it).
Status ReadJsonFile(const std::string& path, std::string* out);

// One JSON document held padded for simdjson, with where its errors are.
class JsonDocument {
 public:
  // Copies `bytes`; `file` names it in errors ("" for memory input).
  JsonDocument(std::string_view bytes, std::string file);

  // The document's root object. A document cut short is parsed up to its last complete value (the
  // cut is then reported by Finish).
  Status Root(simdjson::ondemand::object* root);
  // An error at the parser's position: "byte N: PATH: WHAT".
  Status Error(std::string_view path, std::string_view what);
  // An error from simdjson at `path`.
  Status Error(std::string_view path, simdjson::error_code code);
  // The result of reading the document: `st`, unless it was cut short (then that, first).
  Status Finish(Status st);
  const std::string& file() const { return file_; }
  uint64_t size() const { return size_; }

 private:
  uint64_t Offset();

  std::string file_;
  uint64_t size_ = 0;
  simdjson::padded_string text_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document doc_;
  Status cut_;  // the document did not parse whole: read up to its last complete value
};

// Scalars as the legacy JSON writes them: numbers, or strings holding numbers ("4", "0").
// Each returns false when the value is neither, setting `found` to what it was.
bool JsonInt(simdjson::ondemand::value value, int64_t* out, std::string* found);
bool JsonDouble(simdjson::ondemand::value value, double* out, std::string* found);
// A string, or a number's text; false for anything else.
bool JsonText(simdjson::ondemand::value value, std::string* out, std::string* found);
// The value's JSON text as it stands (objects and arrays whole).
bool JsonRaw(simdjson::ondemand::value value, std::string* out);

// A device profile's content, staged until its place in the trace is known.
struct DeviceProfileJson {
  struct Instruction {
    int64_t ts = 0;     // device clock, ns
    int64_t dur = 0;    // ns
    StringId lane = 0;  // the `label`: the engine or timeline row
    StringId name = 0;  // the opcode
    uint32_t args = kNone;
  };
  std::vector<Instruction> instructions;
  int64_t first_ts = INT64_MAX;
  int64_t nc = -1;                     // the summary's nc_idx, -1 when it names none
  std::vector<std::string> summaries;  // each summary object's fields, as JSON members
  std::set<std::string> ignored_keys;
};

class LegacyJsonReader {
 public:
  LegacyJsonReader(NeuronTraceBuilder* builder, ExplorerProfile* profile, ImportStats* stats,
                   const ImportOptions& options);

  // A device profile document, staged (what was read before an error included).
  Status ParseDevice(JsonDocument* doc, DeviceProfileJson* out);
  // Adds a parsed device profile to NeuronCore `device`; trace ns = device ns + offset.
  void AddDevice(const DeviceProfileJson& profile, uint32_t device, int64_t offset);
  // A device profile read on its own: its first instruction at trace time 0.
  Status ReadDeviceFile(JsonDocument* doc);

  // system_profile.json, then the device profiles in `device_files` (paths) placed on the
  // executions the system profile shows.
  Status ReadSystem(JsonDocument* doc, const std::vector<std::string>& device_files);

  // The instances (hosts) a system_profile.json's entries name (`instance_id` of trace_events,
  // mem_usage and cpu_util), "" left out. The whole document is parsed; nothing is added.
  Status ListInstances(JsonDocument* doc, std::set<std::string>* instances);

  // Whether ImportOptions::part is INSTANCE or INSTANCE/PID (or empty).
  bool part_ok() const { return part_ok_; }

  // One warning listing the top-level keys the reader does not know, if any.
  void WarnIgnored();

 private:
  struct HostSample;
  struct RawEvent;
  Status ParseInstruction(JsonDocument* doc, simdjson::ondemand::object entry, size_t index,
                          DeviceProfileJson* out);
  Status ParseSummary(JsonDocument* doc, simdjson::ondemand::object entry, size_t index,
                      DeviceProfileJson* out);
  Status ParseEvent(JsonDocument* doc, simdjson::ondemand::object entry, const std::string& path,
                    std::vector<RawEvent>* out);
  Status ParseSample(JsonDocument* doc, simdjson::ondemand::object entry, const std::string& path,
                     bool cpu, std::vector<HostSample>* out);
  Status ParseSystem(JsonDocument* doc, std::vector<RawEvent>* events,
                     std::vector<HostSample>* samples);
  void AddSystem(std::vector<RawEvent>* events, const std::vector<HostSample>& samples);
  Status ReadDevicesBeside(const std::vector<std::string>& files);

  NeuronTraceBuilder* builder_;
  ExplorerProfile* profile_;
  ImportStats* stats_;
  const ImportOptions& options_;
  PartFilter filter_;
  bool part_ok_ = true;
  std::set<std::string> ignored_;
  // The hardware executions of the system profile, for placing the device profiles.
  struct Placement {
    std::string instance;
    int64_t pid = 0, nc = 0;
    int64_t start = 0;  // trace ns
    std::string model_id;
    bool used = false;
  };
  std::vector<Placement> executions_;
};

// The reader on a document in memory (a device profile, or a system profile without device
// profiles beside it), as ReadNeuronJson reads a file: for the fuzz target.
Status ReadNeuronJsonBytes(std::string_view bytes, Trace* out, ImportStats* stats,
                           const ImportOptions& options);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_LEGACY_JSON_H_
