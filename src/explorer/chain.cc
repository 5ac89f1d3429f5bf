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

}  // namespace

Chain BuildChain(const TraceIndex& index, uint32_t slice) {
  const auto& slices = index.trace().slices();
  const Trace& trace = index.trace();
  Chain chain;
  chain.selected = slice;
  const int level = LevelOf(index, slice);
  chain.level = level;
  const Slice& sel = slices[slice];

  uint32_t op = kNone;
  switch (level) {
    case kFrameworkLevel:
      op = slice;
      break;
    case kRuntimeLevel:
      op = EnclosingOp(index, slice);
      break;
    case kHardwareLevel:
      op = trace.Link(slice).op;
      if (op == kNone) op = HostOpWithExternalId(index, sel.external_id);
      break;
    default:
      op = HostOpWithExternalId(index, sel.external_id);
      break;
  }

  // Framework: enclosing ops (outermost first), the op, and (when an op is selected) its nested
  // ops.
  std::vector<uint32_t> ops;  // the op and nested ops whose device work belongs to the chain
  if (op != kNone) {
    for (uint32_t p = EnclosingOp(index, op); p != kNone; p = EnclosingOp(index, p)) {
      chain.enclosing.push_back(p);
    }
    std::reverse(chain.enclosing.begin(), chain.enclosing.end());
    chain.op = op;
    ops.push_back(op);
    if (level == kFrameworkLevel) {
      for (uint32_t d : index.Descendants(op, 20000)) {
        if (index.IsHostOp(d)) {
          ops.push_back(d);
          if (chain.nested.size() < kMaxPerLevel) chain.nested.push_back(d);
          ++chain.nested_total;
        }
      }
    }
  }

  // Runtime calls.
  std::unordered_set<uint32_t> seen;
  std::vector<uint32_t> runtime;
  if (level == kRuntimeLevel) {
    AddUnique(&runtime, &seen, slice);
  } else if (level == kFrameworkLevel && op != kNone) {
    for (uint32_t d : index.Descendants(op, 200000)) {
      if (IsRuntimeKind(slices[d].kind)) AddUnique(&runtime, &seen, d);
    }
  } else if (level == kHardwareLevel) {
    AddUnique(&runtime, &seen, trace.Link(slice).runtime);
  }

  // Device executions.
  std::vector<uint32_t> hardware;
  std::unordered_set<uint32_t> seen_hw;
  auto is_exec = [&](uint32_t id) { return LevelOf(index, id) == kHardwareLevel; };
  if (level == kHardwareLevel) {
    AddUnique(&hardware, &seen_hw, slice);
  } else if (level == kInstructionLevel) {
    for (uint32_t id : index.WithExternalId(sel.external_id)) {
      if (is_exec(id) && slices[id].ts_ns <= sel.ts_ns && End(slices[id]) >= sel.ts_ns) {
        AddUnique(&hardware, &seen_hw, id);
      }
    }
    for (uint32_t e : hardware) AddUnique(&runtime, &seen, trace.Link(e).runtime);
  } else {
    for (uint32_t r : runtime) {
      if (slices[r].correlation == 0) continue;
      for (uint32_t id : index.WithCorrelation(slices[r].correlation)) {
        if (id != r && is_exec(id)) AddUnique(&hardware, &seen_hw, id);
      }
    }
    for (uint32_t p : ops) {
      for (uint32_t id : trace.DeviceActivityOf(p)) {
        if (is_exec(id)) AddUnique(&hardware, &seen_hw, id);
      }
    }
  }
  std::sort(hardware.begin(), hardware.end(),
            [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });

  // Instructions: those carrying the chain's External ids, inside its executions.
  std::vector<uint32_t> instructions;
  if (level == kInstructionLevel) {
    instructions.push_back(slice);
  } else {
    std::set<int64_t> ext_ids;
    for (uint32_t p : ops) {
      if (slices[p].external_id != 0) ext_ids.insert(slices[p].external_id);
    }
    for (uint32_t e : hardware) {
      if (slices[e].external_id != 0) ext_ids.insert(slices[e].external_id);
    }
    std::unordered_set<uint32_t> seen_i;
    for (int64_t ext : ext_ids) {
      for (uint32_t id : index.WithExternalId(ext)) {
        if (LevelOf(index, id) != kInstructionLevel) continue;
        bool inside = hardware.empty();
        for (uint32_t e : hardware) {
          if (slices[id].ts_ns >= slices[e].ts_ns && slices[id].ts_ns <= End(slices[e])) {
            inside = true;
            break;
          }
        }
        if (inside) AddUnique(&instructions, &seen_i, id);
      }
    }
    std::sort(instructions.begin(), instructions.end(),
              [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
  }

  // Edges: enclosing -> op -> runtime -> execution -> first instruction per engine lane.
  uint32_t prev = kNone;
  for (uint32_t p : chain.enclosing) {
    if (prev != kNone) chain.edges.emplace_back(prev, p);
    prev = p;
  }
  if (prev != kNone && op != kNone) chain.edges.emplace_back(prev, op);
  for (uint32_t r : runtime) {
    const uint32_t from = EnclosingOp(index, r);
    if (from != kNone) chain.edges.emplace_back(from, r);
  }
  for (uint32_t e : hardware) {
    const DeviceLink& link = trace.Link(e);
    if (link.runtime != kNone && seen.count(link.runtime)) {
      chain.edges.emplace_back(link.runtime, e);
    } else if (link.op != kNone) {
      chain.edges.emplace_back(link.op, e);
    }
  }
  std::set<std::pair<uint32_t, uint32_t>> first_per_lane;  // (execution, lane)
  for (uint32_t i : instructions) {
    for (uint32_t e : hardware) {
      if (slices[i].ts_ns >= slices[e].ts_ns && slices[i].ts_ns <= End(slices[e])) {
        if (first_per_lane.emplace(e, index.LaneOf(i)).second) chain.edges.emplace_back(e, i);
        break;
      }
    }
  }

  std::map<uint32_t, size_t> per_lane;
  for (uint32_t i : instructions) ++per_lane[index.LaneOf(i)];
  chain.instruction_lanes.assign(per_lane.begin(), per_lane.end());
  chain.runtime_total = runtime.size();
  chain.hardware_total = hardware.size();
  chain.instruction_total = instructions.size();
  if (runtime.size() > kMaxPerLevel) runtime.resize(kMaxPerLevel);
  if (hardware.size() > kMaxPerLevel) hardware.resize(kMaxPerLevel);
  if (instructions.size() > kMaxPerLevel) instructions.resize(kMaxPerLevel);
  chain.runtime = std::move(runtime);
  chain.hardware = std::move(hardware);
  chain.instructions = std::move(instructions);
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
