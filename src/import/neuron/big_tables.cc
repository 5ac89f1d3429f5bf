// A device profile's two large timeline tables, Instruction and DmaPacket (or
// DmaPacketAggregated), read in two passes (track_stage.h): the lanes first (the lane columns,
// rows counted per lane of each row group, tracks made and names interned in row order), then the
// slices, built on the decode threads straight into their final place in the arena, which is
// handed to the trace grouped by track.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "base/saturating.h"
#include "import/neuron/explorer_profile.h"
#include "trace/packed_args.h"

namespace opscope::import::neuron {
namespace {

// A lane of one row group by the dictionary indices that name it, mapped to a trace track when
// the row group's lanes are merged.
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

// One decode thread's working state for a row group, reused across row groups.
struct Chunk {
  // Pass 1: the row group's lanes in order of first appearance.
  std::vector<LaneKey> lanes;
  std::vector<uint32_t> counts;
  std::unordered_map<LaneKey, uint32_t, LaneKeyHash> lane_index;
  LaneKey last_key;
  uint32_t last_lane = kNone;
  std::vector<uint32_t> lane_of_row;  // kept across row groups: no fresh memory per row group
  // Pass 2.
  std::vector<uint64_t> cursor;  // local lane -> arena index of its next row
  PackedArgs args;  // DMA: {"bytes": N} per slice, packed into the arg store's blocks as made
  ArgPacker packer;
  std::vector<std::pair<int64_t, uint64_t>> flow_ids;  // (table key id, arena index)
  std::vector<int64_t> flow_id_values;
  int64_t first = INT64_MAX, last = INT64_MIN;
  size_t execution_hint = 0;  // NeuronTraceBuilder::FindExecution's, kept across row groups

  void Clear() {
    lanes.clear();
    counts.clear();
    lane_index.clear();
    last_lane = kNone;
    args.Clear();
    flow_ids.clear();
    flow_id_values.clear();
    first = INT64_MAX;
    last = INT64_MIN;
  }
  // Packs {"bytes": N} (to_chars: fmt's back_inserter formatting was a tenth of a DMA-heavy
  // import), here on the decode thread, between packer.Begin and packer.Finish. No text or views
  // of the whole row group: grown by doubling, those were two thirds of a 10 M + 1 M profile's
  // page faults.
  void AppendBytesArg(int64_t bytes) {
    constexpr std::string_view kHead = "{\"bytes\": ";
    char text[kHead.size() + 24];
    std::memcpy(text, kHead.data(), kHead.size());
    char* end = std::to_chars(text + kHead.size(), text + sizeof(text) - 1, bytes).ptr;
    *end++ = '}';
    packer.Add(std::string_view(text, static_cast<size_t>(end - text)));
  }
  uint32_t Lane(const LaneKey& k) {
    if (last_lane != kNone && k == last_key) return last_lane;
    auto [it, inserted] = lane_index.try_emplace(k, static_cast<uint32_t>(lanes.size()));
    if (inserted) {
      lanes.push_back(k);
      counts.push_back(0);
    }
    last_key = k;
    last_lane = it->second;
    return last_lane;
  }
  // Pass 1: the row's lane, counted.
  void CountRow(int64_t row, const LaneKey& k) {
    const uint32_t lane = Lane(k);
    ++counts[lane];
    lane_of_row[static_cast<size_t>(row)] = lane;
  }
};

// A big table being read: its fields (in the order the passes index them), and what pass 1 found.
struct BigTable {
  std::unique_ptr<ProfileTable> table;
  std::vector<FieldRequest> fields;
  std::vector<GroupLanes> groups;  // by row group (RowGroupView::index)
  size_t counted = 0;              // row groups pass 1 read
  size_t merged = 0;               // row groups pass 2 wrote
  Status count_error, slice_error;
};

// `fields` with only those at `keep` asked for (the others read as absent), indices unchanged.
std::vector<FieldRequest> Only(std::vector<FieldRequest> fields,
                               std::initializer_list<size_t> keep) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), i) == keep.end()) fields[i] = {"", fields[i].type};
  }
  return fields;
}

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

// The DMA table's columns, in the order the passes read them (field(0) .. field(9)); an empty name
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

// Reads the first `row_groups` row groups of `t` with `read`, the error into *error.
void RunPass(BigTable* t, TableRead read, size_t row_groups, Status* error) {
  read.row_groups = row_groups;
  *error = t->table->Read(read);
}

// The big tables' two passes, each a TableRead over one table; ReadBigTables lays out the arena
// between them and hands it over after.
class BigTableReader {
 public:
  BigTableReader(ExplorerProfile* profile, const ProfileDir& dir)
      : p_(*profile),
        dir_(dir),
        builder_(&profile->builder()),
        trace_(builder_->trace()),
        chunks_(static_cast<size_t>(profile->threads())) {
    category_ = trace_->Intern(KinetoCategory(ActivityKind::kInstruction));
  }

  Status Open(const std::string& name, BigTable* t) {
    if (Status st = p_.OpenTable(dir_, name, t->fields, &t->table); !st.ok() || !t->table) {
      return st;
    }
    if (Status st = t->table->CheckFields(t->fields); !st.ok()) return st;
    t->groups.resize(t->table->num_row_groups());
    return Status::Ok();
  }
  void CountInstructionLanes(BigTable* t);
  void WriteInstructions(BigTable* t, Slice* arena);
  void CountDmaLanes(BigTable* t);
  void WriteDma(BigTable* t, Slice* arena);

  bool want_instruction_ids = false;
  bool dma_packets = false, want_dma_ids = false;
  std::string dma_key;

 private:
  TableRead Read(const BigTable& t, std::initializer_list<size_t> keep) {
    TableRead read;
    read.fields = Only(t.fields, keep);
    read.threads = p_.threads();
    return read;
  }
  Chunk& chunk(int slot) { return chunks_[static_cast<size_t>(slot)]; }
  // Pass 2, per slice: its times, execution and place; returns the arena index it goes to.
  uint64_t Place(Chunk& c, GroupLanes& g, int64_t row, int64_t begin, int64_t end, Slice* s);
  void Covered(const Chunk& c, int64_t rows) {
    if (rows != 0) builder_->CoverActivity(dir_.device, c.first, c.last);
    p_.stats().events += static_cast<uint64_t>(rows);
  }

  ExplorerProfile& p_;
  const ProfileDir& dir_;
  NeuronTraceBuilder* builder_;
  Trace* trace_;
  StringId category_ = 0;
  std::vector<Chunk> chunks_;
};

uint64_t BigTableReader::Place(Chunk& c, GroupLanes& g, int64_t row, int64_t begin, int64_t end,
                               Slice* s) {
  s->ts_ns = builder_->ToTrace(internal::SatAdd(begin, dir_.clock_offset));
  s->dur_ns = std::max<int64_t>(end - begin, 0);
  s->category = category_;
  s->kind = ActivityKind::kInstruction;
  const uint32_t lane = g.Lane(static_cast<size_t>(row));
  s->track = g.tracks[lane];
  const Execution* e = builder_->FindExecution(dir_.device, s->ts_ns, &c.execution_hint);
  s->external_id = e != nullptr ? e->external_id : 0;
  c.first = std::min(c.first, s->ts_ns);
  c.last = std::max(c.last, s->ts_ns + s->dur_ns);
  return c.cursor[lane]++;
}

void BigTableReader::CountInstructionLanes(BigTable* t) {
  TableRead read = Read(*t, {2, 3, 4, 5});  // engine, opcode, timeline_track, pcore_idx
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    c.Clear();
    c.lane_of_row.resize(static_cast<size_t>(rg.rows));
    const FieldColumn &engine = rg.field(2), &track = rg.field(4), &pcore = rg.field(5);
    for (int64_t r = 0; r < rg.rows; ++r) {
      c.CountRow(r, {engine.Index(r), track.Index(r), pcore.Int(r)});
    }
    t->groups[rg.index].SetLanes(c.lane_of_row, c.lanes.size());
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    GroupLanes& g = t->groups[rg.index];
    g.names = InternDictionary(trace_, rg.field(3));
    g.tracks.resize(c.lanes.size());
    for (size_t i = 0; i < c.lanes.size(); ++i) {
      const LaneKey& k = c.lanes[i];
      g.tracks[i] = builder_->EngineTrack(dir_.device, k.pcore, DictString(rg.field(4), k.b),
                                          DictString(rg.field(2), k.a));
    }
    g.counts = c.counts;
    (void)trace_->Intern("(no opcode)");
    ++t->counted;
    return Status::Ok();
  };
  RunPass(t, std::move(read), SIZE_MAX, &t->count_error);
}

void BigTableReader::WriteInstructions(BigTable* t, Slice* arena) {
  TableRead read = Read(*t, {0, 1, 3, 6});  // start_ts, end_ts, opcode, id
  const std::set<int64_t>* wanted =
      want_instruction_ids ? &p_.flow_ids_wanted.at("instruction") : nullptr;
  const StringId unnamed = trace_->Intern("(no opcode)");
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    c.Clear();
    GroupLanes& g = t->groups[rg.index];
    c.cursor = g.start;
    const FieldColumn &start = rg.field(0), &end = rg.field(1), &opcode = rg.field(3);
    for (int64_t r = 0; r < rg.rows; ++r) {
      Slice s;
      const int64_t begin = start.Int(r);
      const uint64_t at = Place(c, g, r, begin, end.Int(r, begin), &s);
      const auto name = static_cast<uint32_t>(opcode.Index(r));
      s.name = name < g.names.size() ? g.names[name] : unnamed;
      arena[at] = s;
      if (wanted && !rg.field(6).IsNull(r) && wanted->count(rg.field(6).Int(r))) {
        c.flow_ids.emplace_back(rg.field(6).Int(r), at);
      }
    }
    g.FreeLanes();
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    for (const auto& [id, at] : c.flow_ids) {
      p_.staged_flow_rows.push_back({"instruction", id, arena[at].track, at, false});
    }
    Covered(c, rg.rows);
    ++t->merged;
    return Status::Ok();
  };
  RunPass(t, std::move(read), t->counted, &t->slice_error);
}

void BigTableReader::CountDmaLanes(BigTable* t) {
  // queue_name, queue_idx, queue_type, pcore_idx, engine_idx
  TableRead read = Read(*t, {3, 4, 5, 6, 9});
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    c.Clear();
    c.lane_of_row.resize(static_cast<size_t>(rg.rows));
    for (int64_t r = 0; r < rg.rows; ++r) {
      // A queue by name, else by index, else by the DMA engine that ran it.
      const int32_t queue = rg.field(3).Index(r);
      const int64_t index = !rg.field(4).IsNull(r) ? rg.field(4).Int(r) : rg.field(9).Int(r, -1);
      c.CountRow(r, {queue, queue >= 0 ? -1 : static_cast<int32_t>(index),
                     rg.field(6).Int(r) | (!rg.field(4).IsNull(r) ? 0 : int64_t{1} << 40)});
    }
    t->groups[rg.index].SetLanes(c.lane_of_row, c.lanes.size());
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    GroupLanes& g = t->groups[rg.index];
    g.names = InternQueueTypes(trace_, rg.field(5));
    g.tracks = DmaLaneTracks(c.lanes, rg.field(3), dir_.device, builder_);
    g.counts = c.counts;
    (void)trace_->Intern("dma");
    ++t->counted;
    return Status::Ok();
  };
  RunPass(t, std::move(read), SIZE_MAX, &t->count_error);
}

void BigTableReader::WriteDma(BigTable* t, Slice* arena) {
  // start_ts, end_ts, transfer_bytes, queue_type, id, packet_aggregation_id
  TableRead read = Read(*t, {0, 1, 2, 5, 7, 8});
  const StringId unnamed = trace_->Intern("dma");
  // The arg store's rule (compress once it is large), applied to what the table will add.
  const bool compress_args =
      static_cast<size_t>(t->table->num_rows()) * sizeof("{\"bytes\": 65536}") >
      PackedArgs::kCompressAbove;
  // Each row adds one args object, in row order: row R's is `args_base + R`, checked per row group.
  PackedArgs none;
  const uint32_t args_base = t->counted == 0 ? 0 : trace_->AddPackedArgs(&none);
  read.decode = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    c.Clear();
    GroupLanes& g = t->groups[rg.index];
    c.cursor = g.start;
    c.packer.Begin(static_cast<size_t>(rg.rows), compress_args, &c.args);
    for (int64_t r = 0; r < rg.rows; ++r) {
      Slice s;
      const int64_t begin = rg.field(0).Int(r);
      const uint64_t at = Place(c, g, r, begin, rg.field(1).Int(r, begin), &s);
      const auto name = static_cast<uint32_t>(rg.field(5).Index(r));
      s.name = name < g.names.size() ? g.names[name] : unnamed;
      s.args = args_base + static_cast<uint32_t>(rg.first_row + r);
      arena[at] = s;
      c.AppendBytesArg(rg.field(2).Int(r));
      if (want_dma_ids) {
        c.flow_ids.emplace_back(rg.field(7).Int(r, -1), at);
        c.flow_id_values.push_back(rg.field(8).Int(r, -1));
      }
    }
    c.packer.Finish();
    return Status::Ok();
  };
  read.merge = [&](const RowGroupView& rg, int slot) {
    Chunk& c = chunk(slot);
    GroupLanes& g = t->groups[rg.index];
    const uint32_t expected = args_base + static_cast<uint32_t>(rg.first_row);
    if (rg.rows != 0 && trace_->AddPackedArgs(&c.args) != expected) {
      return TableError(rg, "transfer_bytes", "the trace's args did not take the rows in order");
    }
    for (size_t i = 0; i < c.flow_ids.size(); ++i) {
      const uint64_t at = c.flow_ids[i].second;
      const uint32_t track = arena[at].track;
      p_.staged_flow_rows.push_back({dma_key, c.flow_ids[i].first, track, at, true});
      const int64_t block = dma_packets ? c.flow_id_values[i] : c.flow_ids[i].first;
      p_.staged_flow_rows.push_back({"dmablock", block, track, at, true});  // a block's 1st packet
    }
    g.FreeLanes();
    Covered(c, rg.rows);
    ++t->merged;
    return Status::Ok();
  };
  RunPass(t, std::move(read), t->counted, &t->slice_error);
}

}  // namespace

// Instruction, then DmaPacket when the profile has it (the packets Neuron Explorer draws with
// "Show expanded DMA"), else DmaPacketAggregated: one lane per queue, named "dma_<queue_type>",
// args {"bytes"}. An error keeps every row before it: the slices of the row groups read before
// the first that failed (either pass) are handed over.
Status ExplorerProfile::ReadBigTables(const ProfileDir& dir) {
  BigTableReader reader(this, dir);
  BigTable instructions, dma;
  reader.want_instruction_ids = flow_ids_wanted.count("instruction") > 0;
  instructions.fields = {
      {"start_ts", FieldType::kInt, true},
      {"end_ts", FieldType::kInt, true},
      {"engine", FieldType::kString, true, true},
      {"opcode", FieldType::kString, true, true},
      {"timeline_track", FieldType::kString, false, true},
      {"pcore_idx", FieldType::kInt},
      {reader.want_instruction_ids ? "id" : "", FieldType::kInt},
  };
  reader.dma_packets = dir.has("DmaPacket");
  const std::string dma_table = reader.dma_packets ? "DmaPacket" : "DmaPacketAggregated";
  reader.dma_key = FlowTableKey(dma_table);
  reader.want_dma_ids =
      flow_ids_wanted.count(reader.dma_key) > 0 || flow_ids_wanted.count("dmablock") > 0;
  dma.fields = DmaFields(reader.dma_packets, reader.want_dma_ids);

  Status opened = reader.Open("Instruction", &instructions);
  if (opened.ok() && instructions.table) reader.CountInstructionLanes(&instructions);
  // The DMA table is read only when Instruction was read whole.
  const bool instructions_whole = opened.ok() && instructions.count_error.ok();
  Status dma_opened;
  if (instructions_whole) {
    dma_opened = reader.Open(dma_table, &dma);
    if (dma_opened.ok() && dma.table) reader.CountDmaLanes(&dma);
  }
  std::vector<std::vector<GroupLanes>*> tables = {&instructions.groups, &dma.groups};
  const TrackLayout layout = LayOut(tables, builder_->trace()->tracks().size());
  SliceArena arena;
  if (!arena.Allocate(layout.total, builder_->trace(), threads())) {
    return Status::InvalidInput("the device's " + std::to_string(layout.total) +
                                    " instructions and DMA transfers: out of memory",
                                0)
        .InFile(dir.path);
  }
  if (instructions.counted > 0) reader.WriteInstructions(&instructions, arena.data());
  if (instructions.slice_error.ok() && instructions.merged == instructions.groups.size() &&
      dma.counted > 0) {
    reader.WriteDma(&dma, arena.data());
  }
  std::vector<uint32_t> first;
  arena.HandOver(layout, tables, {instructions.merged, dma.merged}, &first);
  for (const StagedFlowRow& r : staged_flow_rows) {
    const uint32_t slice = first[r.track] + static_cast<uint32_t>(r.at - layout.begin[r.track]);
    if (r.first_wins) {
      flow_slices.try_emplace({r.key, r.id}, slice);
    } else {
      flow_slices[{r.key, r.id}] = slice;
    }
  }
  staged_flow_rows.clear();
  // The first error in row order: a table's slices pass stops before its lanes pass did.
  for (const Status* st : {&opened, &instructions.slice_error, &instructions.count_error,
                           &dma_opened, &dma.slice_error, &dma.count_error}) {
    if (!st->ok()) return *st;
  }
  return Status::Ok();
}

}  // namespace opscope::import::neuron
