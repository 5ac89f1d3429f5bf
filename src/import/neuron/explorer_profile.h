// The Neuron Explorer reader's shared state: one output directory (and the device profiles in its
// sub-folders), its schema as the profile states it (Metadata.profile_schema_version and the
// SchemaFields table), the version rule, the unknown tables and fields counted, and the readers of
// each table (device_tables.cc, system_tables.cc) that fill the trace through NeuronTraceBuilder.
//
// Not thread-safe; a table's rows are decoded on ImportOptions::threads threads inside
// ProfileTable::Read, everything else runs on the importing thread.
#ifndef OPSCOPE_IMPORT_NEURON_EXPLORER_PROFILE_H_
#define OPSCOPE_IMPORT_NEURON_EXPLORER_PROFILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "import/neuron/neuron_trace_builder.h"
#include "import/neuron/profile_tables.h"
#include "import/neuron/track_stage.h"
#include "opscope/import.h"
#include "opscope/status.h"

namespace opscope::import::neuron {

enum EventSource : uint8_t { kFramework, kRuntime, kHardware };

// One SystemProfileEvents row, staged until the rows are linked.
struct SystemEvent {
  int64_t start = 0, end = 0;
  std::string name;
  EventSource source = kFramework;
  std::string instance;
  int64_t pid = 0, tid = 0, nc = 0;
  std::string category;  // the framework event's own category, from its extra attributes
  std::string args;
  std::vector<std::string> flows;
  int64_t external_id = 0, correlation = 0;
  uint32_t slice = kNone;
};

// Links each hardware execution to its runtime call (by shared flow ids, else by time) and gives
// framework events sharing a flow id with a runtime call its External id (system_tables.cc).
void LinkEvents(std::vector<SystemEvent>* events, NeuronTraceBuilder* builder);

// Which part of a several-host profile to read (ImportOptions::part): "INSTANCE" (a host, a rank
// of a job: ListTraceParts' form) or "INSTANCE/PID" (one process of it); empty: all.
struct PartFilter {
  bool any = true;
  std::string instance;
  int64_t pid = -1;
  bool Keeps(std::string_view inst, int64_t p) const {
    return any || (inst == instance && (pid < 0 || p == pid));
  }
};
// Parses "INSTANCE" or "INSTANCE/PID"; false when malformed (a PID that is not a number).
bool ParsePart(const std::string& part, PartFilter* filter);

// One folder of tables: the output directory itself, or a device profile inside it.
struct ProfileDir {
  std::string path;
  std::map<std::string, TableParts> tables;
  // SchemaFields: table -> fields the profile says it has; `listed` false when it has no such
  // table (then each file's own columns are all there is).
  bool listed = false;
  std::map<std::string, std::set<std::string>> fields;
  std::string version;  // Metadata.profile_schema_version ("" for a system profile alone)
  int major = 0;
  // The device this folder's device tables belong to, and its clock: epoch = device ts + offset.
  std::string instance;
  int64_t nc = 0;
  int64_t pid = -1;
  int64_t clock_offset = 0;
  uint32_t device = kNone;
  bool has(const std::string& table) const { return tables.count(table) > 0; }
};

class ExplorerProfile {
 public:
  ExplorerProfile(NeuronTraceBuilder* builder, ImportStats* stats, const ImportOptions& options);

  // Reads the directory at `path` into the builder's trace.
  Status Read(const std::string& path);
  // The instances (hosts) the system profile at `path` names: SystemProfileEvents' and
  // DeviceProfileList's `instance_id`, only those columns read. Empty for a device profile alone.
  Status ListInstances(const std::string& path, std::set<std::string>* instances);

  // ---- For the table readers ----
  NeuronTraceBuilder& builder() { return *builder_; }
  ImportStats& stats() { return *stats_; }
  const ImportOptions& options() const { return options_; }
  int threads() const { return threads_; }
  const PartFilter& filter() const { return filter_; }
  // A warning, kept in the trace's and the stats' messages up to the options' limit.
  void Warn(std::string message);
  // Opens `name` of `dir` (null in *out when the folder has no such table), checking that the
  // profile's schema lists every `needed` field (the version rule) and counting the fields its
  // files hold that the documentation does not list.
  Status OpenTable(const ProfileDir& dir, const std::string& name,
                   const std::vector<FieldRequest>& fields, std::unique_ptr<ProfileTable>* out);

  // system_tables.cc
  Status ReadSystemMetadata(const ProfileDir& dir);
  Status ReadDeviceProfileList(const ProfileDir& dir);
  Status ReadSystemEvents(const ProfileDir& dir);
  Status ReadSystemHbmUsage(const ProfileDir& dir);
  // The linked events as slices (framework ops and runtime calls on host threads, hardware
  // executions on their NeuronCores) and the flow arrows between them.
  void AddSystemEvents(std::vector<SystemEvent>* events);
  // device_tables.cc
  Status ReadDeviceMetadata(ProfileDir* dir);
  Status ReadExecutions(const ProfileDir& dir);
  // big_tables.cc: Instruction, then DmaPacket or DmaPacketAggregated.
  Status ReadBigTables(const ProfileDir& dir);
  Status ReadCollectives(const ProfileDir& dir);
  Status ReadDeviceCounters(const ProfileDir& dir);
  Status ReadFlows(const ProfileDir& dir);
  Status ReadWarnings(const ProfileDir& dir);
  Status ReadSummaries(const ProfileDir& dir);

  // Where device profiles stand in the system profile: DeviceProfileList by folder name.
  struct DeviceIdentity {
    std::string instance;
    int64_t pid = -1;
    int64_t nc = 0;
  };
  std::map<std::string, DeviceIdentity> device_profiles;
  // Flow edges read from the Flow table, bound once the rows they name are added: the ids of each
  // table's rows that some edge needs, and the slice each became.
  std::map<std::string, std::set<int64_t>> flow_ids_wanted;
  std::map<std::pair<std::string, int64_t>, uint32_t> flow_slices;
  struct FlowEdge {
    uint16_t from_table = 0, to_table = 0;  // into flow_tables
    int64_t from_id = 0, to_id = 0;
    StringId type = 0;  // dependency_type
  };
  std::vector<std::string> flow_tables;  // FlowTableKey of each table an edge names
  std::vector<FlowEdge> flow_edges;
  // Adds the edges whose two rows became slices as the trace's flows (then forgets them all).
  void BindFlows(const ProfileDir& dir);

  // The flow rows among the Instruction and DmaPacket slices (big_tables.cc): flow_slices
  // entries made once the slices are handed to the trace and have indices.
  struct StagedFlowRow {
    std::string key;     // table key, as in flow_slices
    int64_t id = 0;      // the row's id
    uint32_t track = 0;  // its slice: at arena index `at` (track_stage.h), on `track`
    uint64_t at = 0;
    bool first_wins = false;  // try_emplace (a DMA block's first packet) rather than assign
  };
  std::vector<StagedFlowRow> staged_flow_rows;

 private:
  Status ReadSchemaFields(ProfileDir* dir);
  Status CheckVersion(ProfileDir* dir);
  Status ListDir(const std::string& path, ProfileDir* dir);
  Status ReadDeviceProfile(ProfileDir* dir);
  void CountUnknown(const ProfileDir& dir);

  NeuronTraceBuilder* builder_;
  ImportStats* stats_;
  ImportOptions options_;
  int threads_ = 1;
  PartFilter filter_;
  size_t warnings_kept_ = 0;
  std::set<std::string> unknown_tables_, unknown_fields_;
};

// The normalized form of a table name as the Flow table spells it ("dma_packet" -> "dmapacket").
std::string FlowTableKey(std::string_view table);

// A profile reader with nothing to keep: its trace, builder and stats are thrown away, one thread
// reads. For listing a profile's hosts (ListInstances) without importing it.
struct ScratchProfile {
  static ImportOptions OneThread() {
    ImportOptions o;
    o.threads = 1;
    return o;
  }
  Trace trace;
  NeuronTraceBuilder builder{&trace};
  ImportStats stats;
  ImportOptions options = OneThread();
  ExplorerProfile profile{&builder, &stats, options};
};

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_EXPLORER_PROFILE_H_
