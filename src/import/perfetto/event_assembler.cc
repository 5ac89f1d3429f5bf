// Matching begins and ends, chaining flows, and filling the model (event_assembler.h).
#include "import/perfetto/event_assembler.h"

#include <algorithm>
#include <memory_resource>
#include <numeric>
#include <unordered_map>

#include "base/huge_array.h"
#include "base/saturating.h"
#include "import/kineto/event_category.h"
#include "import/perfetto/debug_annotations.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {

EventAssembler::EventAssembler(Trace* trace, TrackTable* tracks, ImportLog* log)
    : trace_(trace), tracks_(tracks), log_(log) {}

void EventAssembler::UseBlob(const OpscopeBlob* blob) {
  blob_ = blob;
  for (const OpscopeBlob::Flow& f : blob->flows) listed_flows_[f.ordinal] = &f;
}

void EventAssembler::Reserve(uint64_t input_bytes) {
  // Over-reserving is cheap (pages never written are never resident), and growing by copying is
  // not (every copy writes fresh pages): a slice takes two events of at least a few dozen bytes
  // each, a begin or end marker at least a dozen bytes.
  internal::ReserveHuge(&slices_, input_bytes / 64);
  internal::ReserveHuge(&markers_, input_bytes / 32);
  // Flow endpoints: one per flow id an event carries, a few bytes each; a trace of kernel launches
  // has one for every few events.
  internal::ReserveHuge(&flows_, input_bytes / 128);
}

void EventAssembler::Begin(const Slice& s, bool dropped, const std::vector<FlowRef>& flows) {
  uint32_t index = kNone;
  if (!dropped) {
    index = static_cast<uint32_t>(slices_.size());
    internal::PushBackHuge(&slices_, s);
    for (const FlowRef& f : flows) internal::PushBackHuge(&flows_, PendingFlow{f, s.ts_ns, index});
  }
  PushMarker(s.track, s.ts_ns, index, true);
}

void EventAssembler::End(uint32_t slot, int64_t ts_ns, std::string args,
                         const std::vector<FlowRef>& flows) {
  uint32_t record = kNone;
  if (!args.empty() || !flows.empty()) {
    record = static_cast<uint32_t>(ends_.size());
    ends_.push_back({std::move(args), kNone});
    for (const FlowRef& f : flows) {
      internal::PushBackHuge(&flows_, PendingFlow{f, ts_ns, record | kEndBit});
    }
  }
  PushMarker(slot, ts_ns, record, false);
}

void EventAssembler::Complete(const Slice& s, const std::vector<FlowRef>& flows) {
  const auto index = static_cast<uint32_t>(slices_.size());
  slices_.push_back(s);
  for (const FlowRef& f : flows) flows_.push_back({f, s.ts_ns, index});
}

void EventAssembler::AddFlowEvent(uint32_t slot, int64_t ts_ns, const FlowRef& flow) {
  flows_.push_back({flow, ts_ns, slot});
}

void EventAssembler::PushMarker(uint32_t slot, int64_t ts_ns, uint32_t payload, bool begin) {
  if (slot_last_ts_.size() <= slot) slot_last_ts_.resize(slot + 1, INT64_MIN);
  markers_sorted_ &= ts_ns >= slot_last_ts_[slot];
  slot_last_ts_[slot] = ts_ns;
  internal::PushBackHuge(&markers_, Marker{ts_ns, payload, slot << 1 | (begin ? 1u : 0u)});
}

// Per track, in timestamp order: an end closes the innermost open slice. The markers are in file
// order, which is each track's time order in what writers write; otherwise they are sorted by
// (track, time), file order kept for ties. One pass then matches every track with a stack of its
// own; what depends on the order of tracks (warnings, merged args) is done after it, track by
// track, as a pass over each track in turn would have done it.
void EventAssembler::MatchSlices() {
  if (!markers_sorted_) {
    std::stable_sort(markers_.begin(), markers_.end(), [](const Marker& a, const Marker& b) {
      return (a.slot_begin >> 1) != (b.slot_begin >> 1) ? (a.slot_begin >> 1) < (b.slot_begin >> 1)
                                                        : a.ts_ns < b.ts_ns;
    });
  }
  std::vector<std::vector<uint32_t>> stacks(slot_last_ts_.size());
  std::vector<Deferred> deferred;
  for (const Marker& m : markers_) {
    const uint32_t slot = m.slot_begin >> 1;
    std::vector<uint32_t>& stack = stacks[slot];
    if ((m.slot_begin & 1) != 0) {
      stack.push_back(m.payload);
      continue;
    }
    if (stack.empty()) {
      deferred.push_back({slot, Deferred::kNoOpenSlice, m.ts_ns, kNone, kNone});
      continue;
    }
    const uint32_t p = stack.back();
    stack.pop_back();
    if (p == kNone) continue;  // began before the range of interest
    Slice& s = slices_[p];
    s.dur_ns = std::max<int64_t>(0, internal::SatSub(m.ts_ns, s.ts_ns));
    if (m.payload == kNone) continue;
    ends_[m.payload].slice = p;
    if (!ends_[m.payload].args.empty()) {
      deferred.push_back({slot, Deferred::kMergeArgs, m.ts_ns, p, m.payload});
    }
  }
  for (uint32_t slot = 0; slot < stacks.size(); ++slot) {
    for (uint32_t p : stacks[slot]) {
      if (p != kNone) deferred.push_back({slot, Deferred::kNeverEnded, 0, p, kNone});
    }
  }
  std::stable_sort(deferred.begin(), deferred.end(),
                   [](const Deferred& a, const Deferred& b) { return a.slot < b.slot; });
  for (const Deferred& d : deferred) Apply(d);
  markers_.clear();
  markers_.shrink_to_fit();
}

void EventAssembler::Apply(const Deferred& d) {
  switch (d.what) {
    case Deferred::kNoOpenSlice:
      log_->Warn("a slice end at " + std::to_string(d.ts_ns) +
                     " ns has no open slice on its track; end skipped",
                 true);
      break;
    case Deferred::kMergeArgs: {
      Slice& s = slices_[d.slice];
      const std::string begin = s.args == kNone ? std::string() : trace_->ArgsJson(s.args);
      s.args = trace_->AddArgs(MergeArgs(begin, ends_[d.end].args));
      break;
    }
    case Deferred::kNeverEnded:
      log_->Warn("slice '" + std::string(trace_->Str(slices_[d.slice].name)) + "' at " +
                     std::to_string(slices_[d.slice].ts_ns) + " ns never ended; kept with dur 0",
                 false);
      break;
  }
}

ActivityKind EventAssembler::KindOf(const Slice& s) {
  if (s.kind != kDeriveKind) return s.kind;
  auto it = kind_of_category_.find(s.category);
  if (it != kind_of_category_.end()) return it->second;
  const std::string_view cat = trace_->Str(s.category);
  ActivityKind kind = kDeriveKind;
  if (blob_ != nullptr) {
    for (const auto& [name, k] : blob_->kinds) {
      if (name == cat) kind = k;
    }
  }
  if (kind == kDeriveKind && !cat.empty()) {
    kind = KindFromCategory(cat);
    if (kind == ActivityKind::kOther) kind = kDeriveKind;  // nothing says: by the track
  }
  kind_of_category_.emplace(s.category, kind);
  return kind;
}

void EventAssembler::MarkDeviceTracks() {
  for (const Slice& s : slices_) {
    const ActivityKind kind = KindOf(s);
    if (kind != kDeriveKind && IsDeviceActivity(kind)) tracks_->slot(s.track).device = true;
  }
}

int64_t EventAssembler::Origin() const {
  if (blob_ != nullptr) return blob_->time_shift_ns;
  int64_t origin = INT64_MAX;
  for (const Slice& s : slices_) origin = std::min(origin, s.ts_ns);
  for (const Instant& i : instants_) origin = std::min(origin, i.ts_ns);
  for (const CounterSample& c : counters_) origin = std::min(origin, c.ts_ns);
  return origin == INT64_MAX ? 0 : origin;
}

uint64_t EventAssembler::Finish() {
  MatchSlices();
  MarkDeviceTracks();
  tracks_->Materialize(trace_);
  origin_ = Origin();
  IndexSlicesBySlot();  // for v1 flow events, while slices still name their slots
  const uint64_t added = SlicesToModel(PlaceSlices());
  for (Instant i : instants_) {
    i.track = tracks_->slot(i.track).model_track;
    if (i.track == kNone) continue;
    i.ts_ns = internal::SatSub(i.ts_ns, origin_);
    trace_->AddInstant(i);
  }
  for (CounterSample c : counters_) {
    c.track = tracks_->slot(c.track).model_track;
    if (c.track == kNone) continue;
    c.ts_ns = internal::SatSub(c.ts_ns, origin_);
    trace_->AddCounter(c);
  }
  ChainFlows();
  return added;
}

// Each pending slice made final in place: its model track, kind and time. False when a slice has
// no track in the model (its track is then kNone).
bool EventAssembler::PlaceSlices() {
  StringId last_category = kNone;
  ActivityKind last_kind = kDeriveKind;
  bool all_placed = true;
  for (Slice& s : slices_) {
    const uint32_t track = tracks_->slot(s.track).model_track;
    if (track == kNone) {
      all_placed = false;
      s.track = kNone;
      continue;
    }
    ActivityKind kind = s.kind;
    if (kind == kDeriveKind) {  // by category, the same for a run of slices
      if (s.category != last_category) {
        last_category = s.category;
        last_kind = KindOf(s);
      }
      kind = last_kind;
    }
    if (kind == kDeriveKind) {
      kind = tracks_->slot(s.track).device || trace_->tracks()[track].kind != TrackKind::kThread
                 ? ActivityKind::kKernel
                 : ActivityKind::kUserAnnotation;
    }
    s.kind = kind;
    s.track = track;
    s.ts_ns = internal::SatSub(s.ts_ns, origin_);
  }
  return all_placed;
}

// Into the model: the pending array itself when every slice has its track, else one by one into
// storage on huge pages. Returns how many went in.
uint64_t EventAssembler::SlicesToModel(bool all_placed) {
  first_slice_ = static_cast<uint32_t>(trace_->slices().size());
  if (all_placed) {
    // The model takes the pending array itself when it holds no slices yet: no second copy of
    // every slice to write (and fault in). Pending slices are read from the model from here on.
    const size_t n = slices_.size();
    slices_in_model_ = true;
    trace_->AddSlices(std::move(slices_));
    return n;
  }
  trace_->ReserveSlices(trace_->slices().size() + slices_.size());
  const auto& model = trace_->slices();
  internal::AdviseHugePages(model.data() + model.size(),
                            (model.capacity() - model.size()) * sizeof(Slice));
  uint64_t added = 0;
  trace_index_.assign(slices_.size(), kNone);
  for (size_t i = 0; i < slices_.size(); ++i) {
    if (slices_[i].track == kNone) continue;
    trace_index_[i] = trace_->AddSlice(slices_[i]);
    ++added;
  }
  return added;
}

// Each track's slices by start, for binding v1 flow events (only when there are some).
void EventAssembler::IndexSlicesBySlot() {
  bool any_v1 = false;
  for (const PendingFlow& f : flows_) any_v1 |= f.ref.legacy_v1;
  if (!any_v1) return;
  slices_by_slot_.assign(tracks_->size(), {});
  for (uint32_t i = 0; i < slices_.size(); ++i) slices_by_slot_[slices_[i].track].push_back(i);
  for (auto& list : slices_by_slot_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return slices_[a].ts_ns < slices_[b].ts_ns; });
  }
}

std::string EventAssembler::DeviceType() const {
  DeviceFamily family;
  for (const auto& [category, kind] : kind_of_category_) family.NoteCategory(trace_->Str(category));
  return family.DeviceType(*trace_);
}

uint32_t EventAssembler::BindV1(uint32_t slot, int64_t ts_ns, bool enclosing) const {
  if (slot >= slices_by_slot_.size()) return kNone;
  const std::vector<uint32_t>& list = slices_by_slot_[slot];
  auto start_after = std::upper_bound(list.begin(), list.end(), ts_ns,
                                      [&](int64_t t, uint32_t i) { return t < Pending(i).ts_ns; });
  if (!enclosing) {  // the next slice to begin at or after ts
    auto at = std::lower_bound(list.begin(), list.end(), ts_ns,
                               [&](uint32_t i, int64_t t) { return Pending(i).ts_ns < t; });
    return at == list.end() ? kNone : *at;
  }
  constexpr int kMaxWalk = 4096;  // a flow event far from any enclosing slice binds to none
  int walked = 0;
  for (auto it = start_after; it != list.begin() && walked < kMaxWalk; ++walked) {
    --it;
    const Slice& s = Pending(*it);
    if (internal::SatAdd(s.ts_ns, s.dur_ns) >= ts_ns) return *it;
  }
  return kNone;
}

uint32_t EventAssembler::ResolveTarget(const PendingFlow& f) const {
  uint32_t pending = kNone;
  if (f.ref.op == FlowOp::kStart || f.ref.op == FlowOp::kStep || f.ref.op == FlowOp::kFinish) {
    // Slices' times are relative to the origin by now.
    pending = BindV1(f.target, internal::SatSub(f.ts_ns, origin_),
                     f.ref.op != FlowOp::kFinish || f.ref.binds_enclosing);
  } else if ((f.target & kEndBit) != 0) {
    pending = ends_[f.target & ~kEndBit].slice;
  } else {
    pending = f.target;
  }
  if (pending == kNone) return kNone;
  return trace_index_.empty() ? first_slice_ + pending : trace_index_[pending];
}

void EventAssembler::ChainFlows() {
  if (flows_.empty()) return;
  // The sort's array and the chains' nodes in one arena on huge pages rather than 4 KiB pages,
  // each a fault at its first touch (base/huge_array.h).
  std::pmr::monotonic_buffer_resource arena(flows_.size() * 96, internal::HugePageResource());
  // Timestamp order, file order for ties. The events come in sorted runs (a sequence's packets),
  // which a merge sort takes in stride (an introsort of them fell back to heapsort).
  std::pmr::vector<std::pair<int64_t, uint32_t>> by_time(flows_.size(), &arena);
  for (uint32_t k = 0; k < flows_.size(); ++k) by_time[k] = {flows_[k].ts_ns, k};
  std::stable_sort(by_time.begin(), by_time.end());
  struct Chain {
    uint32_t last = kNone;        // the flow's last slice
    uint32_t orphan_end = kNone;  // a terminating event seen while the flow had no slice yet
    uint32_t orphan_flow = kNone;
  };
  std::pmr::unordered_map<FlowKey, Chain, FlowKeyHash> chains(&arena);
  chains.reserve(flows_.size());
  // A flow per event at most (an orphan's too): room once, rather than growing by copies.
  trace_->ReserveFlows(trace_->flows().size() + flows_.size());
  for (const auto& [ts, k] : by_time) {
    const PendingFlow& f = flows_[k];
    const uint32_t slice = ResolveTarget(f);
    if (slice == kNone) continue;
    const FlowKey key{f.ref.id, f.ref.legacy_v1 ? f.ref.category : kNone};
    Chain& c = chains[key];
    switch (f.ref.op) {
      case FlowOp::kNext:
      case FlowOp::kStep:
        if (c.last != kNone && c.last != slice) AddFlow(f.ref, c.last, slice);
        c.last = slice;
        break;
      case FlowOp::kTerminate:
      case FlowOp::kFinish:
        if (c.last == kNone && c.orphan_end == kNone) {
          c.orphan_end = slice;
          c.orphan_flow = k;
        }
        if (c.last != kNone && c.last != slice) AddFlow(f.ref, c.last, slice);
        c.last = kNone;
        break;
      case FlowOp::kOut:
      case FlowOp::kStart:
        c.last = slice;
        break;
      case FlowOp::kIn:
        if (c.last != kNone && c.last != slice) AddFlow(f.ref, c.last, slice);
        break;
    }
  }
  for (const auto& [key, c] : chains) {
    if (c.last != kNone && c.orphan_end != kNone && c.orphan_end != c.last) {
      AddFlow(flows_[c.orphan_flow].ref, c.last, c.orphan_end);
    }
  }
}

void EventAssembler::AddFlow(const FlowRef& ref, uint32_t from, uint32_t to) {
  Flow flow;
  flow.id = ref.id;
  flow.from = from;
  flow.to = to;
  if (ref.legacy_v1) {
    flow.category = ref.category;
    flow.name = ref.name;
  } else if (blob_ != nullptr) {
    if (flow_category_ == kNone) {  // interned at the first flow, as each flow did before
      flow_category_ = trace_->Intern(blob_->flow_category);
      flow_name_ = trace_->Intern(blob_->flow_name);
    }
    flow.category = flow_category_;
    flow.name = flow_name_;
    if ((ref.id & opscope::perfetto::kListedFlowBit) != 0) {
      const uint64_t ordinal = ref.id & ~opscope::perfetto::kListedFlowBit;
      auto it = listed_flows_.find(ordinal);
      if (it != listed_flows_.end()) {
        flow.id = it->second->id;
        flow.category = trace_->Intern(it->second->category);
        flow.name = trace_->Intern(it->second->name);
      }
    }
  } else {
    if (flow_category_ == kNone) flow_category_ = trace_->Intern("flow");
    flow.category = flow.name = flow_category_;
  }
  trace_->AddFlow(flow);
}

}  // namespace opscope::import::perfetto
