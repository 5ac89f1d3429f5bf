// A device profile's smaller tables: collectives (CcOp), counters (HbmUsage, SbufUsage, DmaUsage),
// dependency edges (Flow), the processing warnings (Warning), and the profile's own summaries
// (Summary, OpcodeSummary) kept for the report to check its figures against.
#include <fmt/format.h>

#include <algorithm>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/neuron/explorer_profile.h"

namespace opscope::import::neuron {
namespace {

// PyTorch's dtype names (what the job's collective analysis reads), from the collective
// library's spellings; unknown ones are kept as the profile writes them.
std::string TorchDtype(std::string_view dtype) {
  std::string d;
  for (char c : dtype) d += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (d == "fp32" || d == "float32" || d == "float") return "Float";
  if (d == "fp16" || d == "float16" || d == "half") return "Half";
  if (d == "bf16" || d == "bfloat16") return "BFloat16";
  if (d == "fp64" || d == "float64" || d == "double") return "Double";
  if (d == "int32" || d == "s32") return "Int";
  if (d == "int64" || d == "s64") return "Long";
  if (d == "int8" || d == "s8") return "Char";
  if (d == "uint8" || d == "u8") return "Byte";
  return std::string(dtype);
}

// The members of the first group of a replica_group text ("[[0, 1, 2, 3], [4, ...]]"): the
// collective's group size; 0 when the text lists none.
int64_t FirstGroupSize(std::string_view groups) {
  const size_t open = groups.find('[', groups.find('[') + 1);
  const size_t close = groups.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return 0;
  const std::string_view first = groups.substr(open + 1, close - open - 1);
  if (first.find_first_not_of(" ") == std::string_view::npos) return 0;
  return static_cast<int64_t>(std::count(first.begin(), first.end(), ',')) + 1;
}

}  // namespace

// CcOp: each collective a kernel "nccom_<operation>_<algorithm>" on the device's "collectives"
// lane, with PyTorch's collective args so the job analysis matches it across ranks. It carries
// the correlation of the execution it ran in, so it is linked to that execution's launch.
Status ExplorerProfile::ReadCollectives(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {
      {"start_ts", FieldType::kInt, true},     {"end_ts", FieldType::kInt, true},
      {"operation", FieldType::kString, true}, {"algorithm", FieldType::kString},
      {"num_elements", FieldType::kInt},       {"dtype", FieldType::kString},
      {"replica_group", FieldType::kString},   {"replica_group_id", FieldType::kInt},
      {"input_size", FieldType::kInt},         {"output_size", FieldType::kInt},
      {"stream_id", FieldType::kInt},          {"op_id", FieldType::kInt},
  };
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "CcOp", fields, &t); !st.ok() || !t) return st;
  Trace* trace = builder_->trace();
  const StringId kernel = trace->Intern(KinetoCategory(ActivityKind::kKernel));
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      const int64_t begin = rg.field(0).Int(r);
      Slice s;
      s.ts_ns = builder_->ToTrace(internal::SatAdd(begin, dir.clock_offset));
      s.dur_ns = std::max<int64_t>(rg.field(1).Int(r, begin) - begin, 0);
      const std::string op(rg.field(2).Str(r));
      std::string name = "nccom_" + op;
      if (!rg.field(3).IsNull(r)) name += "_" + std::string(rg.field(3).Str(r));
      s.name = trace->Intern(name);
      s.category = kernel;
      s.kind = ActivityKind::kKernel;
      s.track = builder_->CollectiveTrack(dir.device);
      if (const Execution* e = builder_->FindExecution(dir.device, s.ts_ns)) {
        s.external_id = e->external_id;
        s.correlation = e->correlation;
      }
      JsonWriter w;
      w.BeginObject();
      w.Field("Collective name", op);
      if (!rg.field(4).IsNull(r)) {
        w.Field("In msg nelems", rg.field(4).Int(r));
        w.Field("Out msg nelems", rg.field(4).Int(r));
      }
      if (!rg.field(5).IsNull(r)) w.Field("dtype", TorchDtype(rg.field(5).Str(r)));
      if (!rg.field(6).IsNull(r)) {
        w.Field("Process Group Name", rg.field(6).Str(r));
        if (const int64_t n = FirstGroupSize(rg.field(6).Str(r)); n > 0) w.Field("Group size", n);
      } else if (!rg.field(7).IsNull(r)) {
        w.Field("Process Group Name", "replica_group " + std::to_string(rg.field(7).Int(r)));
      }
      for (size_t i : {3u, 8u, 9u, 10u, 11u}) {
        if (rg.field(i).IsNull(r)) continue;
        if (i == 3) {
          w.Field("algorithm", rg.field(i).Str(r));
        } else {
          w.Field(fields[i].name, rg.field(i).Int(r));
        }
      }
      w.EndObject();
      s.args = trace->AddArgs(w.Take());
      builder_->CoverActivity(dir.device, s.ts_ns, s.ts_ns + s.dur_ns);
      trace->AddSlice(s);
      ++stats_->events;
    }
    return Status::Ok();
  };
  return t->Read(read);
}

// Time series of the device: HbmUsage's bandwidth, SbufUsage's fullness, DmaUsage's throughput,
// one counter lane each (per physical core).
Status ExplorerProfile::ReadDeviceCounters(const ProfileDir& dir) {
  struct Series {
    const char* table;
    const char* field;
    const char* counter;
  };
  static constexpr Series kSeries[] = {
      {"HbmUsage", "current_throughput", "HBM bandwidth (bytes/s)"},
      {"SbufUsage", "avg_util_percent", "SBUF utilization (%)"},
      {"DmaUsage", "current_throughput", "DMA bandwidth (bytes/s)"},
  };
  Trace* trace = builder_->trace();
  for (const Series& series : kSeries) {
    const std::vector<FieldRequest> fields = {{"timestamp", FieldType::kInt, true},
                                              {series.field, FieldType::kFloat, true},
                                              {"pcore_idx", FieldType::kInt}};
    std::unique_ptr<ProfileTable> t;
    if (Status st = OpenTable(dir, series.table, fields, &t); !st.ok()) return st;
    if (!t) continue;
    TableRead read;
    read.fields = fields;
    read.merge = [&](const RowGroupView& rg, int) {
      for (int64_t r = 0; r < rg.rows; ++r) {
        if (rg.field(1).IsNull(r)) continue;
        const int64_t pcore = rg.field(2).Int(r);
        const std::string name = pcore > 0
                                     ? fmt::format("{} (physical core {})", series.counter, pcore)
                                     : std::string(series.counter);
        CounterSample c;
        c.ts_ns = builder_->ToTrace(internal::SatAdd(rg.field(0).Int(r), dir.clock_offset));
        c.value = rg.field(1).Float(r);
        c.track = builder_->CounterTrack(builder_->DeviceProcess(dir.device), name);
        trace->AddCounter(c);
        ++stats_->events;
      }
      return Status::Ok();
    };
    if (Status st = t->Read(read); !st.ok()) return st;
  }
  return Status::Ok();
}

Status ExplorerProfile::ReadFlows(const ProfileDir& dir) {
  flow_ids_wanted.clear();
  flow_slices.clear();
  flow_tables.clear();
  flow_edges.clear();
  const std::vector<FieldRequest> fields = {
      {"in_id", FieldType::kInt, true},        {"out_id", FieldType::kInt, true},
      {"in_table", FieldType::kString, true},  {"out_table", FieldType::kString, true},
      {"dependency_type", FieldType::kString},
  };
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "Flow", fields, &t); !st.ok() || !t) return st;
  // Edges are held until their rows are read: a bound on their memory.
  constexpr size_t kMaxEdges = size_t{1} << 24;
  size_t dropped = 0;
  const auto table_index = [&](std::string_view name) {
    const std::string key = FlowTableKey(name);
    for (size_t i = 0; i < flow_tables.size(); ++i) {
      if (flow_tables[i] == key) return static_cast<uint16_t>(i);
    }
    flow_tables.push_back(key);
    return static_cast<uint16_t>(flow_tables.size() - 1);
  };
  Trace* trace = builder_->trace();
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      ++stats_->events;
      if (flow_edges.size() >= kMaxEdges || flow_tables.size() > 1000) {
        ++dropped;
        continue;
      }
      FlowEdge e;
      e.from_table = table_index(rg.field(2).Str(r));
      e.to_table = table_index(rg.field(3).Str(r));
      e.from_id = rg.field(0).Int(r);
      e.to_id = rg.field(1).Int(r);
      e.type = trace->Intern(rg.field(4).IsNull(r) ? "dependency" : rg.field(4).Str(r));
      flow_ids_wanted[flow_tables[e.from_table]].insert(e.from_id);
      flow_ids_wanted[flow_tables[e.to_table]].insert(e.to_id);
      flow_edges.push_back(e);
    }
    return Status::Ok();
  };
  Status st = t->Read(read);
  if (dropped > 0) {
    Warn(fmt::format("{}: {} Flow edges past the first {} were not read", dir.path, dropped,
                     kMaxEdges));
  }
  return st;
}

void ExplorerProfile::BindFlows(const ProfileDir& dir) {
  Trace* trace = builder_->trace();
  const StringId category = trace->Intern("neuron_flow");
  uint64_t unbound = 0;
  uint64_t id = 0;
  for (const FlowEdge& e : flow_edges) {
    const auto from = flow_slices.find({flow_tables[e.from_table], e.from_id});
    const auto to = flow_slices.find({flow_tables[e.to_table], e.to_id});
    if (from == flow_slices.end() || to == flow_slices.end()) {
      ++unbound;
      continue;
    }
    trace->AddFlow({++id, category, e.type, from->second, to->second});
    ++stats_->flow_endpoints;
  }
  if (unbound > 0) {
    Warn(
        fmt::format("{}: {} of {} Flow edges name rows opscope did not read (only Instruction, "
                    "DmaPacket and DmaPacketAggregated rows become slices); they were left out",
                    dir.path, unbound, flow_edges.size()));
  }
  flow_edges.clear();
  flow_slices.clear();
  flow_ids_wanted.clear();
}

Status ExplorerProfile::ReadWarnings(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {{"message", FieldType::kString, true},
                                            {"category", FieldType::kString}};
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "Warning", fields, &t); !st.ok() || !t) return st;
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      const std::string_view category = rg.field(1).Str(r);
      Warn(fmt::format("Neuron Explorer warning{}: {}",
                       category.empty() ? "" : " (" + std::string(category) + ")",
                       rg.field(0).Str(r)));
    }
    return Status::Ok();
  };
  return t->Read(read);
}

// Summary and OpcodeSummary, kept as they are under neuronProfile ("summaries",
// "opcode_summaries", one entry per device profile) for the report's agreement check.
Status ExplorerProfile::ReadSummaries(const ProfileDir& dir) {
  static constexpr const char* kSummaryFloats[] = {"total_time",
                                                   "tensor_engine_active_time",
                                                   "vector_engine_active_time",
                                                   "scalar_engine_active_time",
                                                   "gpsimd_engine_active_time",
                                                   "sync_engine_active_time",
                                                   "dma_active_time"};
  static constexpr const char* kSummaryInts[] = {"tensor_engine_instruction_count",
                                                 "vector_engine_instruction_count",
                                                 "scalar_engine_instruction_count",
                                                 "gpsimd_engine_instruction_count",
                                                 "sync_engine_instruction_count",
                                                 "dma_transfer_total_bytes",
                                                 "cc_op_count"};
  std::vector<FieldRequest> fields;
  for (const char* f : kSummaryFloats) fields.push_back({f, FieldType::kFloat});
  for (const char* f : kSummaryInts) fields.push_back({f, FieldType::kInt});
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "Summary", fields, &t); !st.ok()) return st;
  const std::string device(builder_->trace()->Str(
      builder_->trace()->processes()[builder_->DeviceProcess(dir.device)].name));
  std::string summaries;
  if (t) {
    TableRead read;
    read.fields = fields;
    read.merge = [&](const RowGroupView& rg, int) {
      for (int64_t r = 0; r < rg.rows; ++r) {
        JsonWriter w;
        w.BeginObject();
        w.Field("device", device);
        for (size_t i = 0; i < fields.size(); ++i) {
          if (rg.field(i).IsNull(r)) continue;
          w.Key(fields[i].name);
          if (fields[i].type == FieldType::kFloat) {
            w.Double(rg.field(i).Float(r));
          } else {
            w.Int(rg.field(i).Int(r));
          }
        }
        w.EndObject();
        summaries += (summaries.empty() ? "" : ", ") + w.Take();
      }
      return Status::Ok();
    };
    if (Status st = t->Read(read); !st.ok()) return st;
    builder_->AppendInfo("summaries", summaries);
  }
  const std::vector<FieldRequest> op_fields = {
      {"engine", FieldType::kString, true},         {"opcode", FieldType::kString, true},
      {"instruction_count", FieldType::kInt, true}, {"instruction_time_ns", FieldType::kInt, true},
      {"active_time_ns", FieldType::kInt},
  };
  if (Status st = OpenTable(dir, "OpcodeSummary", op_fields, &t); !st.ok() || !t) return st;
  std::string rows;
  TableRead read;
  read.fields = op_fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      JsonWriter w;
      w.BeginObject();
      w.Field("device", device);
      w.Field("engine", rg.field(0).Str(r));
      w.Field("opcode", rg.field(1).Str(r));
      for (size_t i = 2; i < op_fields.size(); ++i) {
        if (!rg.field(i).IsNull(r)) w.Field(op_fields[i].name, rg.field(i).Int(r));
      }
      w.EndObject();
      rows += (rows.empty() ? "" : ", ") + w.Take();
    }
    return Status::Ok();
  };
  if (Status st = t->Read(read); !st.ok()) return st;
  builder_->AppendInfo("opcode_summaries", rows);
  return Status::Ok();
}

}  // namespace opscope::import::neuron
