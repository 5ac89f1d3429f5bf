// The performance model per op: which op instances each of TraceLens's tables covers and their
// device time (see perf_analysis.h and docs/perf-model.md).
//
// One pass binds every device activity (kernel, memcpy, memset) to its launcher; a walk up from
// each launcher then hands the activity to the ops whose device time includes it: the launcher
// (direct time), every modeled op above it (subtree time, TraceLens's perf-report sheets), and
// the op unified_perf_summary collects for it. Grouping those (op, activity) pairs by op gives
// each instance's activity in one sort, without a list per op.
#include <algorithm>

#include "analysis/device_activity.h"
#include "analysis/perf/perf_model_internal.h"
#include "opscope/analysis.h"

namespace opscope::analysis {
namespace {

enum Flag : uint8_t {
  kHasGpu = 1,           // device activity anywhere under the slice
  kLeaf = 2,             // launched device activity itself
  kModeled = 4,          // a cpu_op with a perf model
  kModeledGpuChild = 8,  // has a direct cpu_op child that is modeled and has device activity
  kCollected = 16,       // unified_perf_summary collects it
};

// TraceLens's host call tree (Trace2Tree build_host_call_stack_tree), which decides whose kernel
// time a launch counts in: per thread, cpu_ops, runtime and driver calls in start order on one
// stack (python functions and annotations are not in it). A call pops the entries that ended at
// or before its start. One that ends after the entry it starts in is not nested there: when it
// starts within that entry's last microsecond and the entry has a parent on the stack, the entry
// is popped and the call becomes a sibling (with no further check against the new top);
// otherwise the call is left out of the tree (no parent, nothing nests under it). So a launch
// that ends after its op (CUPTI's clock against the profiler's) counts in no op, or in the op's
// parent when it started in the op's last microsecond; and a child op that ends after its
// parent is out of the tree, its launches nesting where they fall.
std::vector<uint32_t> HostTreeParents(const Trace& trace) {
  const std::vector<Slice>& slices = trace.slices();
  std::vector<uint32_t> parent(slices.size(), kNone);
  std::vector<uint32_t> stack;
  constexpr int64_t kBleedToleranceNs = 1000;  // TraceLens's overlap_tolerance_us = 1.0
  for (uint32_t t = 0; t < trace.tracks().size(); ++t) {
    stack.clear();
    const auto [begin, end] = trace.TrackSlices(t);
    for (uint32_t i = begin; i < end; ++i) {
      const Slice& s = slices[i];
      if (s.kind != ActivityKind::kCpuOp && s.kind != ActivityKind::kRuntime &&
          s.kind != ActivityKind::kDriver) {
        continue;
      }
      const int64_t s_end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
      auto end_of = [&](uint32_t k) {
        return slices[k].ts_ns + std::max<int64_t>(slices[k].dur_ns, 0);
      };
      while (!stack.empty() && s.ts_ns >= end_of(stack.back())) stack.pop_back();
      if (!stack.empty() && s_end > end_of(stack.back())) {
        if (end_of(stack.back()) - s.ts_ns < kBleedToleranceNs && stack.size() >= 2) {
          stack.pop_back();
        } else {
          continue;
        }
      }
      parent[i] = stack.empty() ? kNone : stack.back();
      stack.push_back(i);
    }
  }
  return parent;
}

// The nearest cpu_op strictly above `slice` in the host tree, or kNone.
uint32_t CpuOpParent(const std::vector<Slice>& slices, const std::vector<uint32_t>& parents,
                     uint32_t slice) {
  for (uint32_t p = parents[slice]; p != kNone; p = parents[p]) {
    if (slices[p].kind == ActivityKind::kCpuOp) return p;
  }
  return kNone;
}

class Collector {
 public:
  Collector(const Trace& trace, ArgsCache* args, std::vector<std::unique_ptr<OpModel>>* models)
      : trace_(trace),
        slices_(trace.slices()),
        flags_(slices_.size(), 0),
        parent_(HostTreeParents(trace)),
        args_(args),
        models_(models) {}

  Instances Run() {
    Instances out;
    BindActivity(&out);
    MarkOps();
    out.pairs = MakePairs();
    std::sort(out.pairs.begin(), out.pairs.end(), [](const ActivityOfOp& a, const ActivityOfOp& b) {
      return a.op < b.op || (a.op == b.op && a.activity < b.activity);
    });
    out.ops.reserve(CountOps(out.pairs));
    for (uint32_t i = 0; i < out.pairs.size();) {
      uint32_t j = i;
      while (j < out.pairs.size() && out.pairs[j].op == out.pairs[i].op) ++j;
      Emit(out.pairs[i].op, i, j, &out);
      i = j;
    }
    // Modeled ops without device activity still count (TraceLens includes them in its sheets).
    for (uint32_t s = 0; s < slices_.size(); ++s) {
      if ((flags_[s] & kModeled) && !(flags_[s] & kHasGpu)) Emit(s, 0, 0, &out);
    }
    return out;
  }

 private:
  // At most how many instances Emit makes: one per op with activity, one per modeled op without.
  size_t CountOps(const std::vector<ActivityOfOp>& sorted_pairs) const {
    size_t n = 0;
    for (size_t i = 0; i < sorted_pairs.size(); ++i) {
      n += i == 0 || sorted_pairs[i].op != sorted_pairs[i - 1].op;
    }
    for (uint32_t s = 0; s < slices_.size(); ++s) {
      n += (flags_[s] & kModeled) && !(flags_[s] & kHasGpu);
    }
    return n;
  }

  // Every timeline activity with its launcher (LauncherOf), and the flags it implies.
  void BindActivity(Instances* out) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (uint32_t i = 0; i < slices_.size(); ++i) {
      const Slice& a = slices_[i];
      if (!IsTimelineActivity(a.kind)) continue;
      const uint32_t launcher = Launcher(i);
      if (launcher == kNone) continue;  // unlinked: outside TraceLens's timeline too
      first = std::min(first, a.ts_ns);
      last = std::max(last, a.ts_ns + a.dur_ns);
      activity_.push_back({i, launcher});
      flags_[launcher] |= kLeaf;
      for (uint32_t p = launcher; p != kNone && !(flags_[p] & kHasGpu); p = parent_[p]) {
        flags_[p] |= kHasGpu;
      }
    }
    out->total_ns = activity_.empty() ? 0 : last - first;
  }

  // The op that launched an activity: LauncherOf, except that a launch through a host runtime
  // call belongs to the innermost cpu_op above that call in the host tree (HostTreeParents); the
  // call itself when there is none.
  uint32_t Launcher(uint32_t activity) {
    const uint32_t launcher = LauncherOf(trace_, activity);
    const uint32_t runtime = trace_.Link(activity).runtime;
    if (runtime == kNone || launcher == kNone) return launcher;
    if (launcher != runtime && slices_[launcher].track != slices_[runtime].track) {
      return launcher;  // an op on the device's own timeline
    }
    for (uint32_t p = parent_[runtime]; p != kNone; p = parent_[p]) {
      if (slices_[p].kind == ActivityKind::kCpuOp && trace_.Str(slices_[p].name) != "execute") {
        return p;
      }
    }
    return runtime;
  }

  bool Nccl(uint32_t activity) {
    const StringId name = slices_[activity].name;
    auto it = nccl_.find(name);
    if (it == nccl_.end()) {
      it = nccl_.emplace(name, trace_.Str(name).find("nccl") != std::string_view::npos).first;
    }
    return it->second;
  }

  void MarkOps() {
    for (uint32_t s = 0; s < slices_.size(); ++s) {
      if (slices_[s].kind != ActivityKind::kCpuOp) continue;
      if (KindOf(s).model != ModelKind::kNone) flags_[s] |= kModeled;
    }
    for (uint32_t s = 0; s < slices_.size(); ++s) {
      if ((flags_[s] & kModeled) && (flags_[s] & kHasGpu)) {
        const uint32_t parent = CpuOpParent(slices_, parent_, s);
        if (parent != kNone) flags_[parent] |= kModeledGpuChild;
      }
    }
  }

  // The op unified_perf_summary collects for a launcher's activity: walking down from the roots,
  // TraceLens stops at the first cpu_op that has a model or launches kernels itself; a launcher
  // without a model whose direct children include modeled ops hands over to those children.
  uint32_t CollectedFor(uint32_t launcher) {
    uint32_t outer = kNone, below_outer = kNone, prev = kNone;
    for (uint32_t p = launcher; p != kNone; p = parent_[p]) {
      if (slices_[p].kind != ActivityKind::kCpuOp) continue;
      if (flags_[p] & (kModeled | kLeaf)) {
        outer = p;
        below_outer = prev;
      }
      prev = p;
    }
    if (outer == kNone || (flags_[outer] & kModeled)) return outer;
    if (!(flags_[outer] & kModeledGpuChild)) return outer;
    return below_outer != kNone && (flags_[below_outer] & kModeled) ? below_outer : kNone;
  }

  std::vector<ActivityOfOp> MakePairs() {
    std::vector<ActivityOfOp> pairs;
    pairs.reserve(activity_.size() * 2);
    // Activity comes in slice order, so a launcher's activities mostly follow one another: the
    // collected op of the previous launcher is kept, and CollectedFor is a pure function of the
    // launcher, so a launcher seen again gets the same answer.
    uint32_t last_launcher = kNone;
    for (const auto& [act, launcher] : activity_) {
      if (launcher != last_launcher) {
        last_launcher = launcher;
        const uint32_t collected = CollectedFor(launcher);
        if (collected != kNone) flags_[collected] |= kCollected;
      }
      const uint8_t nccl = Nccl(act) ? ActivityOfOp::kNccl : 0;
      for (uint32_t p = launcher; p != kNone; p = parent_[p]) {
        const bool op = slices_[p].kind == ActivityKind::kCpuOp;
        if (p == launcher || (op && (flags_[p] & (kModeled | kLeaf | kCollected)))) {
          pairs.push_back(
              {p, act, static_cast<uint8_t>(nccl | (p == launcher ? ActivityOfOp::kDirect : 0))});
        }
      }
    }
    return pairs;
  }

  void Emit(uint32_t op, uint32_t begin, uint32_t end, Instances* out) {
    OpInstance inst;
    inst.slice = op;
    inst.begin = begin;
    inst.end = end;
    sub_.clear();
    dir_.clear();
    bool any_nccl = false;
    uint32_t first = kNone, first_direct = kNone;
    for (uint32_t k = begin; k < end; ++k) {
      const ActivityOfOp& p = out->pairs[k];
      const Slice& a = slices_[p.activity];
      sub_.push_back({a.ts_ns, a.ts_ns + a.dur_ns});
      any_nccl |= (p.flags & ActivityOfOp::kNccl) != 0;
      if (first == kNone || a.ts_ns < slices_[first].ts_ns) first = p.activity;
      if (p.direct_non_nccl()) {
        dir_.push_back({a.ts_ns, a.ts_ns + a.dur_ns});
        if (first_direct == kNone || a.ts_ns < slices_[first_direct].ts_ns) {
          first_direct = p.activity;
        }
      }
    }
    const bool launcher = !dir_.empty();
    const uint8_t f = flags_[op];
    const bool collected = (f & kCollected) && !((f & kLeaf) && !(f & kModeled) && any_nccl);
    if (!launcher && !(f & kModeled) && !collected) return;
    if (sub_.size() > 1) MergeIntervals(&sub_);
    if (dir_.size() > 1) MergeIntervals(&dir_);
    inst.subtree_ns = Length(sub_);
    inst.direct_ns = Length(dir_);
    inst.args = args_->Get(op);
    // TraceLens's kernel_details[0]: the earliest activity the op launched itself, else under it.
    const uint32_t k0 = first_direct != kNone ? first_direct : first;
    inst.category = CategoryOf(op, k0);
    if (f & kModeled) {
      inst.model = ModelFor(op, inst.args);
      if (!inst.model->status.ok()) ++out->failed_models;
    }
    const auto index = static_cast<uint32_t>(out->ops.size());
    out->ops.push_back(inst);
    if (launcher) out->launchers.push_back(index);
    if (collected) out->unified.push_back(index);
    if (f & kModeled) out->modeled.push_back(index);
  }

  // CategorizeOp of the op's name and its first kernel's, once per pair of names.
  std::string_view CategoryOf(uint32_t op, uint32_t kernel) {
    const StringId name = slices_[op].name;
    const StringId kernel_name = kernel == kNone ? kNone : slices_[kernel].name;
    const uint64_t key = (static_cast<uint64_t>(name) << 32) | kernel_name;
    auto it = categories_.find(key);
    if (it == categories_.end()) {
      it = categories_
               .emplace(key, CategorizeOp(trace_.Str(name), kernel_name == kNone
                                                                ? std::string_view()
                                                                : trace_.Str(kernel_name)))
               .first;
    }
    return it->second;
  }

  OpKind KindOf(uint32_t s) {
    const StringId name = slices_[s].name;
    auto it = kinds_.find(name);
    if (it == kinds_.end()) it = kinds_.emplace(name, LookupOp(trace_.Str(name))).first;
    return it->second;
  }

  // One model reading per op name and distinct args.
  const OpModel* ModelFor(uint32_t op, const ArgsInfo* args) {
    const StringId name = slices_[op].name;
    auto& slot = model_index_[{name, args}];
    if (slot == 0) {
      models_->push_back(std::make_unique<OpModel>(
          EvaluateOpModel(KindOf(op).model, trace_.Str(name), args->args)));
      slot = models_->size();
    }
    return (*models_)[slot - 1].get();
  }

  struct ModelKey {
    StringId name;
    const ArgsInfo* args;
    bool operator==(const ModelKey&) const = default;
  };
  struct ModelKeyHash {
    size_t operator()(const ModelKey& k) const noexcept {
      return std::hash<const void*>{}(k.args) * 31 + k.name;
    }
  };

  const Trace& trace_;
  const std::vector<Slice>& slices_;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> parent_;                         // HostTreeParents
  std::vector<std::pair<uint32_t, uint32_t>> activity_;  // (activity, launcher)
  std::unordered_map<StringId, OpKind> kinds_;
  std::unordered_map<StringId, bool> nccl_;
  std::unordered_map<uint64_t, std::string_view> categories_;  // (name, kernel name) -> category
  ArgsCache* args_;
  std::vector<std::unique_ptr<OpModel>>* models_;
  std::unordered_map<ModelKey, size_t, ModelKeyHash> model_index_;  // -> 1 + index in models_
  std::vector<Interval> sub_, dir_;                                 // scratch
};

}  // namespace

const ArgsInfo* ArgsCache::Get(uint32_t slice) {
  const Slice& s = trace_.slices()[slice];
  if (s.args == kNone) return &empty_;
  const std::string text = trace_.ArgsJson(s.args);
  if (!parser_.Scan(text)) return &empty_;
  if (auto it = by_key_.find(parser_.key()); it != by_key_.end()) return it->second.get();
  auto info = std::make_unique<ArgsInfo>();
  if (!parser_.ParseScanned(&info->args)) info->args = OpArgs();
  const OpArgs& a = info->args;
  if (a.has_dims) info->dims = FormatShapes(a.dims);
  if (a.has_types) info->types = FormatStrings(a.types);
  if (a.has_strides) info->strides = FormatShapes(a.strides);
  if (a.has_concrete) info->concrete = FormatStrings(a.concrete);
  return by_key_.emplace(std::string(parser_.key()), std::move(info)).first->second.get();
}

Instances CollectInstances(const Trace& trace, ArgsCache* args,
                           std::vector<std::unique_ptr<OpModel>>* models) {
  return Collector(trace, args, models).Run();
}

}  // namespace opscope::analysis

namespace opscope {

PerfModel ComputePerfModel(const Trace& trace, const PerfModelOptions& options) {
  using namespace analysis;
  PerfModel pm;
  pm.device = options.device;
  ArgsCache args(trace);
  std::vector<std::unique_ptr<OpModel>> models;
  const Instances in = CollectInstances(trace, &args, &models);
  pm.failed_models = in.failed_models;
  pm.total_time_ns = in.total_ns;
  pm.ops_by_category = OpsByCategory(trace, in);
  pm.unique_args = UniqueArgs(trace, in);
  pm.rows = ModeledRows(trace, in, in.unified, /*by_params=*/false, options.device);
  pm.modeled_ops = ModeledRows(trace, in, in.modeled, /*by_params=*/true, options.device);
  pm.short_kernels = StudyShortKernels(trace, &args, pm.total_time_ns,
                                       options.short_kernel_threshold_us, options.histogram_bins);
  return pm;
}

}  // namespace opscope
