// The dependency chain of one event (chain.h): flows and correlations followed down the lanes.
#include "explorer/chain.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace opscope::explorer {
namespace {

constexpr size_t kMaxPerLevel = 200;

enum Level { kFrameworkLevel = 0, kRuntimeLevel = 1, kHardwareLevel = 2, kInstructionLevel = 3 };

bool IsRuntimeKind(ActivityKind k) {
  return k == ActivityKind::kRuntime || k == ActivityKind::kDriver;
}

int LevelOf(const TraceIndex& index, uint32_t slice) {
  const Slice& s = index.trace().slices()[slice];
  const uint32_t lane = index.LaneOf(slice);
  if (s.kind == ActivityKind::kInstruction ||
      (lane != kNone && index.lanes()[lane].group == LaneGroup::kEngines)) {
    return kInstructionLevel;
  }
  if (index.OnDevice(slice)) return kHardwareLevel;
  if (IsRuntimeKind(s.kind)) return kRuntimeLevel;
  return kFrameworkLevel;
}

int64_t End(const Slice& s) { return s.ts_ns + std::max<int64_t>(s.dur_ns, 0); }

// The innermost host op enclosing `slice` on its track (or kNone).
uint32_t EnclosingOp(const TraceIndex& index, uint32_t slice) {
  const auto& slices = index.trace().slices();
  uint32_t p = slices[slice].parent;
  while (p != kNone && !index.IsHostOp(p)) p = slices[p].parent;
  return p;
}

uint32_t HostOpWithExternalId(const TraceIndex& index, int64_t ext) {
  if (ext == 0) return kNone;
  for (uint32_t id : index.WithExternalId(ext)) {
    if (index.IsHostOp(id)) return id;
  }
  return kNone;
}

void AddUnique(std::vector<uint32_t>* v, std::unordered_set<uint32_t>* seen, uint32_t id) {
  if (id != kNone && seen->insert(id).second) v->push_back(id);
}

// A chain's ids before each level is cut to kMaxPerLevel.
struct Gathered {
  std::vector<uint32_t> ops;  // the op and nested ops whose device work belongs to the chain
  std::vector<uint32_t> runtime;
  std::unordered_set<uint32_t> runtime_seen;
  std::vector<uint32_t> hardware;  // in start order
  std::unordered_set<uint32_t> hardware_seen;
  std::vector<uint32_t> instructions;  // in start order
};

void SortByStart(const TraceIndex& index, std::vector<uint32_t>* ids) {
  const auto& slices = index.trace().slices();
  std::sort(ids->begin(), ids->end(),
            [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
}

// The host op the selected slice belongs to at its level (kNone when none is known).
uint32_t OpOfSelection(const TraceIndex& index, uint32_t slice, int level) {
  const Slice& sel = index.trace().slices()[slice];
  switch (level) {
    case kFrameworkLevel:
      return slice;
    case kRuntimeLevel:
      return EnclosingOp(index, slice);
    case kHardwareLevel: {
      const uint32_t op = index.trace().Link(slice).op;
      return op != kNone ? op : HostOpWithExternalId(index, sel.external_id);
    }
    default:
      return HostOpWithExternalId(index, sel.external_id);
  }
}

// Framework: enclosing ops (outermost first), the op, and (when an op is selected) its nested
// ops.
void GatherFramework(const TraceIndex& index, Chain* chain, Gathered* g) {
  const uint32_t op = chain->op;
  if (op == kNone) return;
  for (uint32_t p = EnclosingOp(index, op); p != kNone; p = EnclosingOp(index, p)) {
    chain->enclosing.push_back(p);
  }
  std::reverse(chain->enclosing.begin(), chain->enclosing.end());
  g->ops.push_back(op);
  if (chain->level != kFrameworkLevel) return;
  for (uint32_t d : index.Descendants(op, 20000)) {
    if (index.IsHostOp(d)) {
      g->ops.push_back(d);
      if (chain->nested.size() < kMaxPerLevel) chain->nested.push_back(d);
      ++chain->nested_total;
    }
  }
}

// Runtime calls: the selected one, those nested in a selected op, or an execution's launch.
void GatherRuntime(const TraceIndex& index, const Chain& chain, Gathered* g) {
  const auto& slices = index.trace().slices();
  if (chain.level == kRuntimeLevel) {
    AddUnique(&g->runtime, &g->runtime_seen, chain.selected);
  } else if (chain.level == kFrameworkLevel && chain.op != kNone) {
    for (uint32_t d : index.Descendants(chain.op, 200000)) {
      if (IsRuntimeKind(slices[d].kind)) AddUnique(&g->runtime, &g->runtime_seen, d);
    }
  } else if (chain.level == kHardwareLevel) {
    AddUnique(&g->runtime, &g->runtime_seen, index.trace().Link(chain.selected).runtime);
  }
}

// Device executions: the selected one; those around a selected instruction (and their launches,
// added to the runtime calls); else those the runtime calls and ops launched.
void GatherHardware(const TraceIndex& index, const Chain& chain, Gathered* g) {
  const Trace& trace = index.trace();
  const auto& slices = trace.slices();
  const Slice& sel = slices[chain.selected];
  auto add_exec = [&](uint32_t id) {
    if (LevelOf(index, id) == kHardwareLevel) AddUnique(&g->hardware, &g->hardware_seen, id);
  };
  if (chain.level == kHardwareLevel) {
    AddUnique(&g->hardware, &g->hardware_seen, chain.selected);
  } else if (chain.level == kInstructionLevel) {
    for (uint32_t id : index.WithExternalId(sel.external_id)) {
      if (slices[id].ts_ns <= sel.ts_ns && End(slices[id]) >= sel.ts_ns) add_exec(id);
    }
    for (uint32_t e : g->hardware) AddUnique(&g->runtime, &g->runtime_seen, trace.Link(e).runtime);
  } else {
    for (uint32_t r : g->runtime) {
      if (slices[r].correlation == 0) continue;
      for (uint32_t id : index.WithCorrelation(slices[r].correlation)) {
        if (id != r) add_exec(id);
      }
    }
    for (uint32_t p : g->ops) {
      for (uint32_t id : trace.DeviceActivityOf(p)) add_exec(id);
    }
  }
  SortByStart(index, &g->hardware);
}

// True when `id` starts inside one of `executions` (or there are none to be inside).
bool InsideAny(const TraceIndex& index, uint32_t id, const std::vector<uint32_t>& executions) {
  const auto& slices = index.trace().slices();
  if (executions.empty()) return true;
  for (uint32_t e : executions) {
    if (slices[id].ts_ns >= slices[e].ts_ns && slices[id].ts_ns <= End(slices[e])) return true;
  }
  return false;
}

// Instructions: the selected one, else those carrying the chain's External ids, inside its
// executions.
void GatherInstructions(const TraceIndex& index, const Chain& chain, Gathered* g) {
  if (chain.level == kInstructionLevel) {
    g->instructions.push_back(chain.selected);
    return;
  }
  const auto& slices = index.trace().slices();
  std::set<int64_t> ext_ids;
  for (uint32_t p : g->ops) {
    if (slices[p].external_id != 0) ext_ids.insert(slices[p].external_id);
  }
  for (uint32_t e : g->hardware) {
    if (slices[e].external_id != 0) ext_ids.insert(slices[e].external_id);
  }
  std::unordered_set<uint32_t> seen;
  for (int64_t ext : ext_ids) {
    for (uint32_t id : index.WithExternalId(ext)) {
      if (LevelOf(index, id) != kInstructionLevel) continue;
      if (InsideAny(index, id, g->hardware)) AddUnique(&g->instructions, &seen, id);
    }
  }
  SortByStart(index, &g->instructions);
}

// Edges: enclosing -> op -> runtime -> execution -> first instruction per engine lane.
void AddEdges(const TraceIndex& index, const Gathered& g, Chain* chain) {
  const Trace& trace = index.trace();
  const auto& slices = trace.slices();
  uint32_t prev = kNone;
  for (uint32_t p : chain->enclosing) {
    if (prev != kNone) chain->edges.emplace_back(prev, p);
    prev = p;
  }
  if (prev != kNone && chain->op != kNone) chain->edges.emplace_back(prev, chain->op);
  for (uint32_t r : g.runtime) {
    const uint32_t from = EnclosingOp(index, r);
    if (from != kNone) chain->edges.emplace_back(from, r);
  }
  for (uint32_t e : g.hardware) {
    const DeviceLink& link = trace.Link(e);
    if (link.runtime != kNone && g.runtime_seen.count(link.runtime)) {
      chain->edges.emplace_back(link.runtime, e);
    } else if (link.op != kNone) {
      chain->edges.emplace_back(link.op, e);
    }
  }
  std::set<std::pair<uint32_t, uint32_t>> first_per_lane;  // (execution, lane)
  for (uint32_t i : g.instructions) {
    for (uint32_t e : g.hardware) {
      if (slices[i].ts_ns >= slices[e].ts_ns && slices[i].ts_ns <= End(slices[e])) {
        if (first_per_lane.emplace(e, index.LaneOf(i)).second) chain->edges.emplace_back(e, i);
        break;
      }
    }
  }
}

// The totals and per-lane counts, then each level cut to kMaxPerLevel.
void CutLevels(const TraceIndex& index, Gathered&& g, Chain* chain) {
  std::map<uint32_t, size_t> per_lane;
  for (uint32_t i : g.instructions) ++per_lane[index.LaneOf(i)];
  chain->instruction_lanes.assign(per_lane.begin(), per_lane.end());
  chain->runtime_total = g.runtime.size();
  chain->hardware_total = g.hardware.size();
  chain->instruction_total = g.instructions.size();
  if (g.runtime.size() > kMaxPerLevel) g.runtime.resize(kMaxPerLevel);
  if (g.hardware.size() > kMaxPerLevel) g.hardware.resize(kMaxPerLevel);
  if (g.instructions.size() > kMaxPerLevel) g.instructions.resize(kMaxPerLevel);
  chain->runtime = std::move(g.runtime);
  chain->hardware = std::move(g.hardware);
  chain->instructions = std::move(g.instructions);
}

}  // namespace

Chain BuildChain(const TraceIndex& index, uint32_t slice) {
  Chain chain;
  chain.selected = slice;
  chain.level = LevelOf(index, slice);
  chain.op = OpOfSelection(index, slice, chain.level);
  Gathered g;
  GatherFramework(index, &chain, &g);
  GatherRuntime(index, chain, &g);
  GatherHardware(index, chain, &g);
  GatherInstructions(index, chain, &g);
  AddEdges(index, g, &chain);
  CutLevels(index, std::move(g), &chain);
  return chain;
}

void WriteChain(const TraceIndex& index, uint32_t slice, JsonWriter* w) {
  const Chain chain = BuildChain(index, slice);
  static constexpr const char* kRoles[3] = {"upstream", "selected", "downstream"};
  auto role_of = [&](int level) {
    return kRoles[level < chain.level ? 0 : level == chain.level ? 1 : 2];
  };
  w->BeginObject();
  w->Field("selected", chain.selected);
  w->Field("level", chain.level);
  w->Key("levels");
  w->BeginArray();
  auto level = [&](const char* key, const char* title, const char* role, size_t total,
                   const std::vector<uint32_t>& ids,
                   const std::vector<std::pair<uint32_t, size_t>>* by_lane = nullptr) {
    if (ids.empty()) return;
    w->BeginObject();
    w->Field("key", key);
    w->Field("title", title);
    w->Field("role", role);
    w->Field("total", static_cast<uint64_t>(total));
    w->Key("events");
    w->BeginArray();
    for (uint32_t id : ids) index.WriteSliceRef(id, w);
    w->EndArray();
    if (by_lane != nullptr) {
      w->Key("by_lane");
      w->BeginArray();
      for (const auto& [lane, count] : *by_lane) {
        w->BeginObject();
        w->Field("lane", lane == kNone ? int64_t{-1} : int64_t{lane});
        w->Field("title", lane < index.lanes().size() ? index.lanes()[lane].title : "?");
        w->Field("count", static_cast<uint64_t>(count));
        w->EndObject();
      }
      w->EndArray();
    }
    w->EndObject();
  };
  level("enclosing", "enclosing framework ops", "upstream", chain.enclosing.size(),
        chain.enclosing);
  std::vector<uint32_t> op;
  if (chain.op != kNone) op.push_back(chain.op);
  level("framework", "framework op", role_of(kFrameworkLevel), op.size(), op);
  level("nested", "nested framework ops", "downstream", chain.nested_total, chain.nested);
  level("runtime", "runtime calls", role_of(kRuntimeLevel), chain.runtime_total, chain.runtime);
  level("hardware", "device executions", role_of(kHardwareLevel), chain.hardware_total,
        chain.hardware);
  level("instructions", "engine instructions", role_of(kInstructionLevel), chain.instruction_total,
        chain.instructions, &chain.instruction_lanes);
  w->EndArray();
  w->Key("edges");
  w->BeginArray();
  for (const auto& [a, b] : chain.edges) {
    w->BeginArray();
    w->Int(a);
    w->Int(b);
    w->EndArray();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
