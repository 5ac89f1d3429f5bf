// How a Neuron profile lands in the trace model, whichever file it came from (Neuron Explorer's
// Parquet tables or the profiler's legacy JSON): the processes, lanes and ids opscope's own
// simulated NeuronCore reports (src/device/neuron), so that every analysis and view reads a real
// profile as it reads a simulated one (docs/neuron-profiles.md draws the whole mapping).
//
//   host:   process "<instance>/PID:<pid>", one thread track per thread: framework ops (cpu_op)
//           with the runtime calls they make nested inside (privateuse1_runtime);
//   device: process "NeuronCore <nc>" (is_device), lanes "nc_exec (execution queue)" (device
//           executions, kernel), "collectives" (CcOp, kernel), one lane per engine or timeline
//           track ("TensorMatrix", ...; instructions named by opcode) and one per DMA queue
//           ("DMA queue <queue>"), " (physical core N)" appended past physical core 0; counters.
//   ids:    an execution and its runtime call share a correlation (the ac2g link); the framework
//           op, the runtime call, the execution and its instructions share an External id.
//
// Not thread-safe: one builder per trace, used by one thread at a time.
#ifndef OPSCOPE_IMPORT_NEURON_NEURON_TRACE_BUILDER_H_
#define OPSCOPE_IMPORT_NEURON_NEURON_TRACE_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::neuron {

// Lane and counter names the analyses recognise (src/analysis/neuron_device.cc reads them).
inline constexpr std::string_view kExecutionLane = "nc_exec (execution queue)";
inline constexpr std::string_view kCollectivesLane = "collectives";
inline constexpr std::string_view kDmaLanePrefix = "DMA queue ";
inline constexpr std::string_view kHbmInUseCounter = "HBM bytes in use";
// TraceMetadata::extra key of what the profile says of itself (versions, bandwidths, its own
// summaries, which engine each lane belongs to), a JSON object.
inline constexpr std::string_view kProfileInfoKey = "neuronProfile";

// A device execution as the profile gives it, in trace nanoseconds.
struct Execution {
  int64_t start = 0;
  int64_t end = 0;
  int64_t external_id = 0;
  int64_t correlation = 0;
};

class NeuronTraceBuilder {
 public:
  explicit NeuronTraceBuilder(Trace* trace);

  Trace* trace() { return trace_; }

  // Host and device clocks meet in epoch nanoseconds; the trace's times are relative to the base
  // (TraceMetadata::base_time_ns), set once before any time is converted.
  void SetBaseTime(int64_t epoch_ns);
  int64_t base_time() const { return base_; }
  int64_t ToTrace(int64_t epoch_ns) const;

  // Host side: one process per (instance, pid), one track per thread.
  uint32_t HostProcess(std::string_view instance, int64_t pid);
  uint32_t HostTrack(std::string_view instance, int64_t pid, int64_t tid);

  // A logical NeuronCore of an instance, by its index; returns a device handle.
  uint32_t Device(std::string_view instance, int64_t nc);
  uint32_t DeviceProcess(uint32_t device) const { return devices_[device].process; }
  uint32_t ExecutionTrack(uint32_t device);
  uint32_t CollectiveTrack(uint32_t device);
  // An engine lane named `lane` (the profile's timeline track, else its engine) on physical core
  // `pcore`; `engine` is the engine the profile names (Instruction.engine).
  uint32_t EngineTrack(uint32_t device, int64_t pcore, std::string_view lane,
                       std::string_view engine);
  uint32_t DmaTrack(uint32_t device, int64_t pcore, std::string_view queue);
  uint32_t CounterTrack(uint32_t process, std::string_view name);

  // Fresh ids for links the profile implies (never 0).
  int64_t NewExternalId() { return ++last_external_id_; }
  int64_t NewCorrelation() { return ++last_correlation_; }

  // Device executions, for the instructions inside them: added in any order, then SortExecutions;
  // FindExecution gives the one whose [start, end] holds `ts` (a device with a single execution
  // whose span is not yet known holds every ts), or null.
  void AddExecution(uint32_t device, const Execution& e);
  void SortExecutions();
  const Execution* FindExecution(uint32_t device, int64_t ts) const;
  // The same from `*hint` (the caller's last answer's place; updated): times in time order, or
  // runs of them inside one execution, cost a comparison or two each instead of a search.
  // Inline: the big tables ask once a row.
  const Execution* FindExecution(uint32_t device, int64_t ts, size_t* hint) const {
    const DeviceState& d = devices_[device];
    const std::vector<Execution>& e = d.executions;
    const size_t h = *hint;
    // The answer is the last execution starting at or before ts: `h` when it starts at or
    // before ts and the next one after.
    if (d.synthesized || h >= e.size() || e[h].start > ts ||
        (h + 1 < e.size() && e[h + 1].start <= ts)) {
      return SearchExecution(device, ts, hint);
    }
    return ts <= e[h].end ? &e[h] : nullptr;
  }
  bool HasExecutions(uint32_t device) const { return !devices_[device].executions.empty(); }
  // A device whose profile gives no executions: one spanning all of its activity, added by
  // Finish as a kernel slice "nc_exec_running" with args {"synthesized": true}; its ids now.
  const Execution& SynthesizedExecution(uint32_t device);
  // The same with the ids of the runtime call that launched it (0: fresh / none).
  const Execution& SynthesizedExecution(uint32_t device, int64_t external_id, int64_t correlation);
  // Widens the synthesized execution of `device` (if any) to cover [start, end].
  void CoverActivity(uint32_t device, int64_t start, int64_t end);

  // What the profile says of itself: `key` with a raw JSON value, written under kProfileInfoKey.
  void SetInfo(std::string key, std::string json_value);
  // Appends `json_items` (JSON values separated by commas; "" for none) to the array `key`.
  void AppendInfo(const std::string& key, const std::string& json_items);
  // A Neuron device (the chip whose NeuronCores share its HBM), for its memory counters.
  uint32_t ChipProcess(std::string_view instance, int64_t device_idx);
  // A host as a whole ("<instance>", "host" when unnamed), for its memory and CPU counters.
  uint32_t InstanceProcess(std::string_view instance);
  void AddWarning(std::string message);

  // Adds the synthesized executions, writes the profile info and device type ("NEURON").
  // Call once, before Trace::Finalize.
  void Finish();

 private:
  struct DeviceState {
    uint32_t process = kNone;
    uint32_t execution_track = kNone;
    uint32_t collective_track = kNone;
    int64_t next_tid = 2;
    std::vector<Execution> executions;  // sorted by start after SortExecutions
    bool synthesized = false;
    bool covered = false;
  };
  // The search FindExecution does without a hint, or with one that does not hold (the hint moved
  // to the answer's place).
  const Execution* SearchExecution(uint32_t device, int64_t ts, size_t* hint) const;
  int InstanceIndex(std::string_view instance);
  uint32_t DeviceLane(uint32_t device, const std::string& name, int64_t sort_index);

  Trace* trace_;
  int64_t base_ = 0;
  bool base_set_ = false;
  std::vector<std::string> instances_;
  std::map<std::pair<std::string, int64_t>, uint32_t> host_processes_;
  std::map<std::tuple<std::string, int64_t, int64_t>, uint32_t> host_tracks_;
  std::map<std::pair<std::string, int64_t>, uint32_t> device_index_;
  std::vector<DeviceState> devices_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> lanes_;  // (device, lane name) -> track
  std::map<std::pair<uint32_t, std::string>, uint32_t> counters_;
  std::map<std::string, std::string> engine_of_lane_;  // lanes whose name is not their engine
  std::map<std::string, std::string> info_;
  std::map<std::string, std::string> info_arrays_;
  std::map<std::pair<std::string, int64_t>, uint32_t> chips_;
  std::map<std::string, uint32_t, std::less<>> instance_processes_;
  int64_t last_external_id_ = 0;
  int64_t last_correlation_ = 0;
  int64_t next_counter_tid_ = 1 << 30;
};

// "YYYY-MM-DD HH:MM:SS[.fraction][ +HH:MM | +HHMM | Z][ UTC]" (the forms Neuron Explorer writes
// first_ts in) as epoch nanoseconds; false when `text` is not such a time.
bool ParseTimestamp(std::string_view text, int64_t* epoch_ns);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_NEURON_TRACE_BUILDER_H_
