// A device profile's timeline tables: Metadata (its clock and hardware), ExecutionInfo, and the
// two large ones, Instruction and DmaPacket (or DmaPacketAggregated), decoded row group by row
// group on the import's threads and merged into the trace in row order.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "base/huge_array.h"
#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/neuron/explorer_profile.h"
#include "trace/packed_args.h"

namespace opscope::import::neuron {
namespace {

// A device timestamp this large is already epoch nanoseconds (after 1973).
constexpr int64_t kEpochNsFloor = int64_t{100000000} * 1000000000;

// Lanes of one row group by the dictionary indices that name them, mapped to trace tracks when
// the row group is merged.
struct LaneKey {
  int32_t a = -1;  // engine / queue name
  int32_t b = -1;  // timeline track / queue index
  int64_t pcore = 0;
  bool operator==(const LaneKey&) const = default;
};
struct LaneKeyHash {
  size_t operator()(const LaneKey& k) const {
    return std::hash<int64_t>()((int64_t{k.a} << 32) ^ (int64_t{k.b} << 8) ^ k.pcore);
  }
};

// One thread's share of a timeline table: the row group's slices with local lane indices in
// Slice::track and dictionary indices in Slice::name, fixed up when merged.
struct Chunk {
  std::vector<Slice> slices;
  size_t rows = 0;  // of `slices`, the row group's
  std::vector<LaneKey> lanes;
  std::unordered_map<LaneKey, uint32_t, LaneKeyHash> lane_index;
  LaneKey last_key;
  uint32_t last_lane = kNone;
  PackedArgs args;                           // DMA: {"bytes": N} per slice
  std::string args_text;                     // DMA: the objects, back to back
  std::vector<std::string_view> args_views;  // DMA: one per slice, into args_text
  ArgPacker packer;
  std::vector<std::pair<int64_t, uint32_t>> flow_ids;  // (table key index, id) -> chunk slice
  std::vector<int64_t> flow_id_values;
  std::vector<uint32_t> positions;  // per slice: its index in the stage's track
  int64_t first = INT64_MAX, last = INT64_MIN;

  // Keeps `slices` (grown, never shrunk, by the next decode; its first `rows` are the row
  // group's): rebuilding 64-byte defaults per row group cost a tenth of the import; decode sets
  // every field the tables give, the others are never written.
  void Clear() {
    lanes.clear();
    lane_index.clear();
    last_lane = kNone;
    args.Clear();
    args_text.clear();
    args_views.clear();
    flow_ids.clear();
    flow_id_values.clear();
    first = INT64_MAX;
    last = INT64_MIN;
  }
  // Packs `args_text`'s objects (one flat JSON object per slice, back to back) into the arg
  // store's blocks, here on the decode thread.
  void PackArgs(bool compress) {
    for (size_t at = 0; at < args_text.size();) {
      const size_t end = args_text.find('}', at) + 1;
      args_views.emplace_back(args_text.data() + at, end - at);
      at = end;
    }
    packer.Pack(args_views, compress, &args);
  }
  uint32_t Lane(const LaneKey& k) {
    if (last_lane != kNone && k == last_key) return last_lane;
    auto [it, inserted] = lane_index.try_emplace(k, static_cast<uint32_t>(lanes.size()));
    if (inserted) lanes.push_back(k);
    last_key = k;
    last_lane = it->second;
    return last_lane;
  }
};

// The interned ids of a row group's dictionary, looked up once per distinct string.
std::vector<StringId> InternDictionary(Trace* trace, const FieldColumn& column) {
  std::vector<StringId> ids;
  if (!column.present()) return ids;
  const parquet::ValueBuffer& dict = column.dictionary();
  ids.resize(static_cast<size_t>(dict.count));
  for (int64_t i = 0; i < dict.count; ++i)
    ids[static_cast<size_t>(i)] = trace->Intern(dict.ByteArray(i));
  return ids;
}

// Rows of the DMA table ReadDma reads (0 when it has none or it cannot be opened: ReadDma then
// reports the error), so that the slices of both big tables are reserved at once.
int64_t DmaRows(const ProfileDir& dir) {
  const auto it = dir.tables.find(dir.has("DmaPacket") ? "DmaPacket" : "DmaPacketAggregated");
  std::unique_ptr<ProfileTable> t;
  if (it == dir.tables.end() || !ProfileTable::Open(it->second, &t).ok()) return 0;
  return t->num_rows();
}

std::string_view DictString(const FieldColumn& column, int32_t index) {
  return index < 0 ? std::string_view() : column.dictionary().ByteArray(index);
}

// The slice name of each queue type in a row group's dictionary: "dma_<queue_type>".
std::vector<StringId> InternQueueTypes(Trace* trace, const FieldColumn& queue_types) {
  std::vector<StringId> names;
  if (!queue_types.present()) return names;
  for (int64_t i = 0; i < queue_types.dictionary().count; ++i) {
    names.push_back(trace->Intern("dma_" + std::string(queue_types.dictionary().ByteArray(i))));
  }
  return names;
}

// The DMA table's columns, in the order ReadDma reads them (field(0) .. field(9)); an empty name
// is a column not asked for.
std::vector<FieldRequest> DmaFields(bool packets, bool want_ids) {
  return {
      {"start_ts", FieldType::kInt, true},
      {"end_ts", FieldType::kInt, true},
      {"transfer_bytes", FieldType::kInt, true},
      {"queue_name", FieldType::kString, !packets, true},
      {"queue_idx", FieldType::kInt, !packets},
      {"queue_type", FieldType::kString, packets, true},
      {"pcore_idx", FieldType::kInt},
      {want_ids ? "id" : "", FieldType::kInt},
      {want_ids && packets ? "packet_aggregation_id" : "", FieldType::kInt},
      {packets ? "engine_idx" : "", FieldType::kInt},
  };
}

// The trace track of each of a chunk's DMA lanes: a queue by its name (`queue_names`' dictionary),
// else by its index, else by the DMA engine that ran it (bit 40 of the lane's pcore).
std::vector<uint32_t> DmaLaneTracks(const std::vector<LaneKey>& lanes,
                                    const FieldColumn& queue_names, uint32_t device,
                                    NeuronTraceBuilder* builder) {
  std::vector<uint32_t> tracks(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const LaneKey& k = lanes[i];
    const bool by_engine = (k.pcore >> 40) != 0;
    const std::string queue = k.a >= 0    ? std::string(DictString(queue_names, k.a))
                              : by_engine ? fmt::format("engine {}", k.b)
                                          : std::to_string(k.b);
    tracks[i] = builder->DmaTrack(device, k.pcore & ((int64_t{1} << 40) - 1), queue);
  }
  return tracks;
}

}  // namespace

Status ExplorerProfile::ReadDeviceMetadata(ProfileDir* dir) {
  std::unique_ptr<ProfileTable> t;
  const std::vector<FieldRequest> fields = {
      {"profile_schema_version", FieldType::kString, true},
      {"first_hw_timestamp", FieldType::kInt},
      {"first_ts", FieldType::kString},
      {"dma_ddr_bandwidth", FieldType::kFloat},
      {"hbm_ddr_bandwidth", FieldType::kFloat},
      {"num_physical_cores", FieldType::kInt},
      {"num_dma_engines_per_neuroncore", FieldType::kInt},
      {"neuroncore_idx", FieldType::kInt},
      {"instance_type", FieldType::kString},
      {"runtime_version", FieldType::kString},
      {"explorer_version", FieldType::kString},
      {"is_simulation", FieldType::kBool},
  };
  if (Status st = OpenTable(*dir, "Metadata", fields, &t); !st.ok() || !t) return st;
  bool seen = false;
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    if (rg.rows == 0 || seen) return Status::Ok();
    seen = true;
    dir->version = std::string(rg.field(0).Str(0));
    const int64_t first_hw = rg.field(1).Int(0);
    int64_t epoch = 0;
    if (first_hw >= kEpochNsFloor) {
      dir->clock_offset = 0;
    } else if (ParseTimestamp(rg.field(2).Str(0), &epoch)) {
      dir->clock_offset = epoch - first_hw;
    } else if (first_hw != 0 || !rg.field(2).IsNull(0)) {
      Warn(
          fmt::format("{}: Metadata.first_ts '{}' is not a time opscope reads; the device's "
                      "times stay on its own clock",
                      dir->path, rg.field(2).Str(0)));
    }
    builder_->SetBaseTime(internal::SatAdd(first_hw, dir->clock_offset));
    dir->nc = rg.field(7).Int(0, 0);
    JsonWriter w;
    w.BeginObject();
    w.Field("profile_schema_version", dir->version);
    for (size_t i : {3u, 4u}) {
      if (!rg.field(i).IsNull(0)) {
        w.Key(fields[i].name);
        w.Double(rg.field(i).Float(0));
      }
    }
    for (size_t i : {5u, 6u}) {
      if (!rg.field(i).IsNull(0)) w.Field(fields[i].name, rg.field(i).Int(0));
    }
    for (size_t i : {8u, 9u, 10u}) {
      if (!rg.field(i).IsNull(0)) w.Field(fields[i].name, rg.field(i).Str(0));
    }
    if (!rg.field(11).IsNull(0)) {
      w.Key("is_simulation");
      w.Bool(rg.field(11).Bool(0));
    }
    w.EndObject();
    builder_->SetInfo("metadata", w.Take());
    return Status::Ok();
  };
  ++stats_->metadata;
  return t->Read(read);
}

Status ExplorerProfile::ReadExecutions(const ProfileDir& dir) {
  if (builder_->HasExecutions(dir.device)) return Status::Ok();  // the system profile's
  std::unique_ptr<ProfileTable> t;
  const std::vector<FieldRequest> fields = {{"execution_index", FieldType::kInt, true},
                                            {"neff_name", FieldType::kString},
                                            {"execution_start_ts", FieldType::kInt},
                                            {"execution_end_ts", FieldType::kInt}};
  if (Status st = OpenTable(dir, "ExecutionInfo", fields, &t); !st.ok() || !t) return st;
  TableRead read;
  read.fields = fields;
  Trace* trace = builder_->trace();
  const StringId name = trace->Intern("nc_exec_running");
  const StringId kernel = trace->Intern(KinetoCategory(ActivityKind::kKernel));
  // ExecutionInfo's times are "relative to the start of the profile": device times past the
  // profile's first timestamp; a time already past it is taken as a device time.
  const int64_t profile_start = builder_->base_time() - dir.clock_offset;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      ++stats_->events;
      if (rg.field(2).IsNull(r) || rg.field(3).IsNull(r)) continue;  // pre-v6 NTFF: no timeline
      int64_t start = rg.field(2).Int(r), end = rg.field(3).Int(r);
      if (start < profile_start) {
        start = internal::SatAdd(start, profile_start);
        end = internal::SatAdd(end, profile_start);
      }
      Execution e{builder_->ToTrace(internal::SatAdd(start, dir.clock_offset)), 0,
                  builder_->NewExternalId(), 0};
      e.end = e.start + std::max<int64_t>(end - start, 0);
      Slice s;
      s.ts_ns = e.start;
      s.dur_ns = e.end - e.start;
      s.name = name;
      s.category = kernel;
      s.kind = ActivityKind::kKernel;
      s.track = builder_->ExecutionTrack(dir.device);
      s.external_id = e.external_id;
      JsonWriter w;
      w.BeginObject();
      w.Field("execution_index", rg.field(0).Int(r));
      if (!rg.field(1).IsNull(r)) w.Field("program", rg.field(1).Str(r));
      w.EndObject();
      s.args = trace->AddArgs(w.Take());
      trace->AddSlice(s);
      builder_->AddExecution(dir.device, e);
    }
    return Status::Ok();
  };
  return t->Read(read);
}

Status ExplorerProfile::ReadInstructions(const ProfileDir& dir) {
  const bool want_ids = flow_ids_wanted.count("instruction") > 0;
  std::vector<FieldRequest> fields = {
      {"start_ts", FieldType::kInt, true},
      {"end_ts", FieldType::kInt, true},
      {"engine", FieldType::kString, true, true},
      {"opcode", FieldType::kString, true, true},
      {"timeline_track", FieldType::kString, false, true},
      {"pcore_idx", FieldType::kInt},
      {want_ids ? "id" : "", FieldType::kInt},
  };
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "Instruction", fields, &t); !st.ok() || !t) return st;
  std::vector<Chunk> chunks(static_cast<size_t>(threads_));
  Trace* trace = builder_->trace();
  const StringId category = trace->Intern(KinetoCategory(ActivityKind::kInstruction));
  const std::set<int64_t>* wanted = want_ids ? &flow_ids_wanted.at("instruction") : nullptr;
  TableRead read;
  read.fields = fields;
  read.threads = threads_;
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunks[static_cast<size_t>(slot)];
    c.Clear();
    c.rows = static_cast<size_t>(rg.rows);
    if (c.slices.size() < c.rows) c.slices.resize(c.rows);
    const FieldColumn &start = rg.field(0), &end = rg.field(1), &engine = rg.field(2),
                      &opcode = rg.field(3), &track = rg.field(4), &pcore = rg.field(5);
    for (int64_t r = 0; r < rg.rows; ++r) {
      Slice& s = c.slices[static_cast<size_t>(r)];
      const int64_t begin = start.Int(r);
      s.ts_ns = builder_->ToTrace(internal::SatAdd(begin, dir.clock_offset));
      s.dur_ns = std::max<int64_t>(end.Int(r, begin) - begin, 0);
      s.name = static_cast<StringId>(opcode.Index(r));  // a dictionary index until merged
      s.category = category;
      s.kind = ActivityKind::kInstruction;
      s.track = c.Lane({engine.Index(r), track.Index(r), pcore.Int(r)});
      const Execution* e = builder_->FindExecution(dir.device, s.ts_ns);
      s.external_id = e != nullptr ? e->external_id : 0;
      c.first = std::min(c.first, s.ts_ns);
      c.last = std::max(c.last, s.ts_ns + s.dur_ns);
      if (wanted && !rg.field(6).IsNull(r) && wanted->count(rg.field(6).Int(r))) {
        c.flow_ids.emplace_back(rg.field(6).Int(r), static_cast<uint32_t>(r));
      }
    }
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunks[static_cast<size_t>(slot)];
    const std::vector<StringId> names = InternDictionary(trace, rg.field(3));
    std::vector<uint32_t> tracks(c.lanes.size());
    for (size_t i = 0; i < c.lanes.size(); ++i) {
      const LaneKey& k = c.lanes[i];
      tracks[i] = builder_->EngineTrack(dir.device, k.pcore, DictString(rg.field(4), k.b),
                                        DictString(rg.field(2), k.a));
    }
    const StringId unnamed = trace->Intern("(no opcode)");
    c.positions.resize(c.rows);
    for (size_t i = 0; i < c.rows; ++i) {
      Slice& s = c.slices[i];
      s.name = s.name < names.size() ? names[s.name] : unnamed;
      s.track = tracks[s.track];
      c.positions[i] = stage.Push(s);
    }
    for (const auto& [id, row] : c.flow_ids) {
      staged_flow_rows.push_back({"instruction", id, c.slices[row].track, c.positions[row], false});
    }
    if (c.rows != 0) builder_->CoverActivity(dir.device, c.first, c.last);
    stats_->events += static_cast<uint64_t>(rg.rows);
    return Status::Ok();
  };
  // Both big tables' slices at once, on huge pages: written once in order, their first touch
  // would otherwise fault every 4 KiB (base/huge_array.h), and the sort of Finalize reads them
  // back out of order.
  const size_t slices = trace->slices().size() + static_cast<size_t>(t->num_rows() + DmaRows(dir));
  if (slices > trace->slices().capacity()) {
    trace->ReserveSlices(slices);
    internal::AdviseHugePages(trace->slices().data(), slices * sizeof(Slice));
  }
  return t->Read(read);
}

// DmaPacket when the profile has it (the packets Neuron Explorer draws with "Show expanded DMA"),
// else DmaPacketAggregated: one lane per queue, named "dma_<queue_type>", args {"bytes"}.
Status ExplorerProfile::ReadDma(const ProfileDir& dir) {
  const bool packets = dir.has("DmaPacket");
  const std::string table = packets ? "DmaPacket" : "DmaPacketAggregated";
  const std::string key = FlowTableKey(table);
  const bool want_ids = flow_ids_wanted.count(key) > 0 || flow_ids_wanted.count("dmablock") > 0;
  const std::vector<FieldRequest> fields = DmaFields(packets, want_ids);
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, table, fields, &t); !st.ok() || !t) return st;
  std::vector<Chunk> chunks(static_cast<size_t>(threads_));
  Trace* trace = builder_->trace();
  const StringId category = trace->Intern(KinetoCategory(ActivityKind::kInstruction));
  // The arg store's rule (compress once it is large), applied to what the table will add.
  const bool compress_args = static_cast<size_t>(t->num_rows()) * sizeof("{\"bytes\": 65536}") >
                             PackedArgs::kCompressAbove;
  TableRead read;
  read.fields = fields;
  read.threads = threads_;
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunks[static_cast<size_t>(slot)];
    c.Clear();
    c.rows = static_cast<size_t>(rg.rows);
    if (c.slices.size() < c.rows) c.slices.resize(c.rows);
    for (int64_t r = 0; r < rg.rows; ++r) {
      Slice& s = c.slices[static_cast<size_t>(r)];
      const int64_t begin = rg.field(0).Int(r);
      s.ts_ns = builder_->ToTrace(internal::SatAdd(begin, dir.clock_offset));
      s.dur_ns = std::max<int64_t>(rg.field(1).Int(r, begin) - begin, 0);
      s.name = static_cast<StringId>(rg.field(5).Index(r));
      s.category = category;
      s.kind = ActivityKind::kInstruction;
      // A queue by name, else by index, else by the DMA engine that ran it.
      const int32_t queue = rg.field(3).Index(r);
      const int64_t index = !rg.field(4).IsNull(r) ? rg.field(4).Int(r) : rg.field(9).Int(r, -1);
      s.track = c.Lane({queue, queue >= 0 ? -1 : static_cast<int32_t>(index),
                        rg.field(6).Int(r) | (!rg.field(4).IsNull(r) ? 0 : int64_t{1} << 40)});
      const Execution* e = builder_->FindExecution(dir.device, s.ts_ns);
      s.external_id = e != nullptr ? e->external_id : 0;
      fmt::format_to(std::back_inserter(c.args_text), "{{\"bytes\": {}}}", rg.field(2).Int(r));
      c.first = std::min(c.first, s.ts_ns);
      c.last = std::max(c.last, s.ts_ns + s.dur_ns);
      if (want_ids) {
        c.flow_ids.emplace_back(rg.field(7).Int(r, -1), static_cast<uint32_t>(r));
        c.flow_id_values.push_back(rg.field(8).Int(r, -1));
      }
    }
    c.PackArgs(compress_args);
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunks[static_cast<size_t>(slot)];
    const std::vector<StringId> names = InternQueueTypes(trace, rg.field(5));
    const std::vector<uint32_t> tracks = DmaLaneTracks(c.lanes, rg.field(3), dir.device, builder_);
    const StringId unnamed = trace->Intern("dma");
    const uint32_t first_args = c.rows == 0 ? kNone : trace->AddPackedArgs(&c.args);
    c.positions.resize(c.rows);
    for (size_t i = 0; i < c.rows; ++i) {
      Slice& s = c.slices[i];
      s.name = s.name < names.size() ? names[s.name] : unnamed;
      s.track = tracks[s.track];
      s.args = first_args + static_cast<uint32_t>(i);
      c.positions[i] = stage.Push(s);
    }
    for (size_t i = 0; i < c.flow_ids.size(); ++i) {
      const uint32_t row = c.flow_ids[i].second;
      const uint32_t track = c.slices[row].track, pos = c.positions[row];
      staged_flow_rows.push_back({key, c.flow_ids[i].first, track, pos, true});
      const int64_t block = packets ? c.flow_id_values[i] : c.flow_ids[i].first;
      staged_flow_rows.push_back({"dmablock", block, track, pos, true});  // a block's first packet
    }
    if (c.rows != 0) builder_->CoverActivity(dir.device, c.first, c.last);
    stats_->events += static_cast<uint64_t>(rg.rows);
    return Status::Ok();
  };
  return t->Read(read);
}

void ExplorerProfile::FlushStaged() {
  std::vector<uint32_t> first;
  stage.Flush(builder_->trace(), &first);
  for (const StagedFlowRow& r : staged_flow_rows) {
    const uint32_t slice = first[r.track] + r.pos;
    if (r.first_wins) {
      flow_slices.try_emplace({r.key, r.id}, slice);
    } else {
      flow_slices[{r.key, r.id}] = slice;
    }
  }
  staged_flow_rows.clear();
}

}  // namespace opscope::import::neuron
