// The linking rules of a torch.profiler trace with its Neuron profile (torch_link.h), in the order
// they apply: what each side leaves out, the ids both carry, the clock offset, then the time rule
// for whatever no id linked. docs/neuron-profiles.md states the same rules for users.
#include "import/neuron/torch_link.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "base/saturating.h"
#include "import/neuron/neuron_trace_builder.h"

namespace opscope::import::neuron {
namespace {

// A time this large is epoch nanoseconds (after 1973), not a time relative to a profile.
constexpr int64_t kEpochNsFloor = int64_t{100000000} * 1000000000;
// Id-linked runtime calls whose starts differ by more than this on the base times' clocks mean the
// base times disagree; the pairs' median offset is used instead.
constexpr int64_t kClockTolerance_ns = 1000000;

// The args keys that carry the runtime's ids, at the top of a slice's args or inside the Neuron
// profile's "extra_attributes": flow ids (SystemProfileEvents.flow_id) and execution ids.
constexpr std::string_view kFlowKeys[] = {"flow_id", "flow_ids", "neuron_flow_id"};
constexpr std::string_view kExecutionKeys[] = {"execution_id", "exec_id", "neuron_execution_id"};

bool IsRuntime(ActivityKind k) { return k == ActivityKind::kRuntime || k == ActivityKind::kDriver; }

bool OnDevice(const Trace& t, const Slice& s) {
  return t.processes()[t.tracks()[s.track].process].is_device;
}

void AddIdValue(simdjson::dom::element v, char prefix, int depth, std::vector<std::string>* ids) {
  std::string_view str;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  if (v.get_string().get(str) == simdjson::SUCCESS) {
    if (!str.empty()) ids->push_back(fmt::format("{}:{}", prefix, str));
  } else if (v.get_int64().get(i) == simdjson::SUCCESS) {
    ids->push_back(fmt::format("{}:{}", prefix, i));
  } else if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    ids->push_back(fmt::format("{}:{}", prefix, u));
  } else if (v.get_double().get(d) == simdjson::SUCCESS &&
             d == static_cast<double>(static_cast<int64_t>(d))) {
    ids->push_back(fmt::format("{}:{}", prefix, static_cast<int64_t>(d)));
  } else if (simdjson::dom::array a; depth == 0 && v.get_array().get(a) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : a) AddIdValue(e, prefix, 1, ids);
  }
}

void AddIdsOf(simdjson::dom::object o, int depth, std::vector<std::string>* ids) {
  simdjson::dom::element v;
  for (std::string_view k : kFlowKeys) {
    if (o[k].get(v) == simdjson::SUCCESS) AddIdValue(v, 'f', 0, ids);
  }
  for (std::string_view k : kExecutionKeys) {
    if (o[k].get(v) == simdjson::SUCCESS) AddIdValue(v, 'e', 0, ids);
  }
  simdjson::dom::object extra;
  if (depth == 0 && o["extra_attributes"].get(extra) == simdjson::SUCCESS) {
    AddIdsOf(extra, 1, ids);
  }
}

// The ids a slice's args carry, as "f:<flow id>" and "e:<execution id>".
std::vector<std::string> IdsOf(const Trace& t, const Slice& s, simdjson::dom::parser& parser) {
  std::vector<std::string> ids;
  if (s.args == kNone) return ids;
  const std::string json = t.ArgsJson(s.args);
  simdjson::dom::object o;
  if (parser.parse(json).get(o) == simdjson::SUCCESS) AddIdsOf(o, 0, &ids);
  return ids;
}

// The framework op a torch slice belongs to: a cpu_op itself, a runtime call's enclosing cpu_op,
// a device activity's linked op; kNone when none.
uint32_t TorchOpOf(const Trace& t, uint32_t i) {
  const Slice& s = t.slices()[i];
  if (IsDeviceActivity(s.kind)) return t.Link(i).op;
  for (uint32_t p = i; p != kNone; p = t.slices()[p].parent) {
    if (t.slices()[p].kind == ActivityKind::kCpuOp) return p;
  }
  return kNone;
}

// The innermost cpu_op on `track` whose span holds `ts`, kNone when none.
uint32_t EnclosingOp(const Trace& t, uint32_t track, int64_t ts) {
  const auto [b, e] = t.TrackSlices(track);
  const auto first = t.slices().begin();
  auto it = std::upper_bound(first + b, first + e, ts,
                             [](int64_t v, const Slice& s) { return v < s.ts_ns; });
  if (it == first + b) return kNone;
  for (uint32_t p = static_cast<uint32_t>(it - first - 1); p != kNone; p = t.slices()[p].parent) {
    const Slice& s = t.slices()[p];
    if (s.kind == ActivityKind::kCpuOp && s.ts_ns <= ts &&
        ts <= internal::SatAdd(s.ts_ns, s.dur_ns)) {
      return p;
    }
  }
  return kNone;
}

// The span [first start, last end] of the slices `keep` accepts; false when none.
template <typename Keep>
bool Span(const Trace& t, Keep keep, int64_t* lo, int64_t* hi) {
  *lo = INT64_MAX;
  *hi = INT64_MIN;
  for (const Slice& s : t.slices()) {
    if (!keep(s)) continue;
    *lo = std::min(*lo, s.ts_ns);
    *hi = std::max(*hi, internal::SatAdd(s.ts_ns, s.dur_ns));
  }
  return *lo <= *hi;
}

class Linker {
 public:
  Linker(const Trace& torch, const Trace& neuron) : t_(torch), n_(neuron) {
    const size_t nn = n_.slices().size();
    l_.op_of.assign(nn, kNone);
    l_.rule.assign(nn, LinkRule::kNone);
    l_.torch_runtime_of.assign(nn, kNone);
    l_.drop_torch.assign(t_.slices().size(), false);
    l_.drop_neuron.assign(nn, false);
  }

  TorchNeuronLinks Run() {
    Drops();
    LinkByIds();
    AlignClocks();
    if (l_.aligned) LinkByTime();
    Count();
    return std::move(l_);
  }

 private:
  // The torch trace's device activity gives way to the Neuron profile's executions; the Neuron
  // profile's framework events to the torch trace's ops: those of the processes the torch trace
  // has (same pid), or all of them when no process matches (pids seen through another namespace).
  void Drops() {
    const auto& ts = t_.slices();
    const auto& ns = n_.slices();
    const bool neuron_exec = std::any_of(
        ns.begin(), ns.end(), [](const Slice& s) { return s.kind == ActivityKind::kKernel; });
    const bool torch_ops = std::any_of(
        ts.begin(), ts.end(), [](const Slice& s) { return s.kind == ActivityKind::kCpuOp; });
    for (size_t i = 0; neuron_exec && i < ts.size(); ++i) {
      if (!IsDeviceActivity(ts[i].kind)) continue;
      l_.drop_torch[i] = true;
      ++l_.torch_device_dropped;
    }
    std::set<int64_t> torch_pids;
    for (const Process& p : t_.processes()) {
      if (!p.is_device) torch_pids.insert(p.pid);
    }
    // The Neuron reader keeps a host process's OS pid as its sort index.
    const auto same_pid = [&](const Slice& s) {
      return torch_pids.count(n_.processes()[n_.tracks()[s.track].process].sort_index) > 0;
    };
    const bool any_same = std::any_of(
        ns.begin(), ns.end(), [&](const Slice& s) { return !OnDevice(n_, s) && same_pid(s); });
    for (size_t i = 0; torch_ops && i < ns.size(); ++i) {
      if (OnDevice(n_, ns[i]) || IsRuntime(ns[i].kind)) continue;
      if (any_same && !same_pid(ns[i])) continue;
      l_.drop_neuron[i] = true;
      ++l_.neuron_framework_dropped;
    }
  }

  // The id rule: a Neuron runtime call or execution carrying an id (flow id or execution id) that
  // a torch runtime call or device activity carries belongs to that one's framework op; a torch
  // runtime call whose id a Neuron runtime call carries is the same call, and is left out.
  void LinkByIds() {
    simdjson::dom::parser parser;
    struct Carrier {
      uint32_t op, runtime;
    };
    std::unordered_map<std::string, Carrier> torch_ids;
    const auto& ts = t_.slices();
    for (uint32_t i = 0; i < ts.size(); ++i) {
      if (!IsRuntime(ts[i].kind) && !IsDeviceActivity(ts[i].kind)) continue;
      const uint32_t runtime = IsRuntime(ts[i].kind) ? i : t_.Link(i).runtime;
      for (std::string& id : IdsOf(t_, ts[i], parser)) {
        torch_ids.try_emplace(std::move(id), Carrier{TorchOpOf(t_, i), runtime});
      }
    }
    if (torch_ids.empty()) return;
    const auto& ns = n_.slices();
    for (uint32_t j = 0; j < ns.size(); ++j) {
      if (!IsRuntime(ns[j].kind) && ns[j].kind != ActivityKind::kKernel) continue;
      for (const std::string& id : IdsOf(n_, ns[j], parser)) {
        const auto it = torch_ids.find(id);
        if (it == torch_ids.end()) continue;
        l_.op_of[j] = it->second.op;
        l_.rule[j] = LinkRule::kId;
        const uint32_t rt = it->second.runtime;
        if (rt != kNone && IsRuntime(ns[j].kind)) {
          if (!l_.drop_torch[rt]) ++l_.torch_runtime_replaced;
          l_.drop_torch[rt] = true;
          pairs_.push_back(internal::SatSub(ts[rt].ts_ns, ns[j].ts_ns));
        } else if (rt != kNone && n_.Link(j).runtime == kNone) {
          l_.torch_runtime_of[j] = rt;
        }
        break;
      }
    }
  }

  // Both base times are epoch nanoseconds: the offset is their difference. Id-linked runtime calls
  // (the same call in both files) check it: when their median offset disagrees by more than
  // kClockTolerance_ns, or a side states no epoch time, the pairs' offset is used, with a warning.
  void AlignClocks() {
    const int64_t tb = t_.metadata().base_time_ns, nb = n_.metadata().base_time_ns;
    int64_t t0, t1, n0, n1;
    const bool torch_host = Span(
        t_, [&](const Slice& s) { return !OnDevice(t_, s); }, &t0, &t1);
    const bool neuron_any = Span(
        n_, [](const Slice&) { return true; }, &n0, &n1);
    if (!torch_host || !neuron_any) return;
    const bool epoch =
        internal::SatAdd(tb, t0) >= kEpochNsFloor && internal::SatAdd(nb, n0) >= kEpochNsFloor;
    l_.neuron_shift_ns = internal::SatSub(nb, tb);
    l_.aligned = epoch;
    if (!pairs_.empty()) {
      std::nth_element(pairs_.begin(), pairs_.begin() + pairs_.size() / 2, pairs_.end());
      const int64_t median = pairs_[pairs_.size() / 2];  // torch start - neuron start, as stored
      const int64_t residual = internal::SatSub(median, l_.neuron_shift_ns);
      if (!epoch || residual > kClockTolerance_ns || residual < -kClockTolerance_ns) {
        l_.warnings.push_back(fmt::format(
            "{}; the Neuron profile is placed by the {} runtime calls both files hold (same id): "
            "their median offset, {:.3f} ms from the base times' alignment",
            epoch ? "the base times of the torch trace and the Neuron profile disagree"
                  : "the torch trace or the Neuron profile states no epoch time",
            pairs_.size(), static_cast<double>(residual) / 1e6));
        l_.neuron_shift_ns = median;
        l_.aligned = true;
      }
    } else if (!epoch) {
      l_.warnings.push_back(
          "the torch trace and the Neuron profile cannot be aligned: one of them states no epoch "
          "time (baseTimeNanoseconds; Metadata first_ts / SystemProfileMetadata first_ts_ns) and "
          "no runtime call carries an id both hold; the Neuron profile's times are kept as they "
          "are and nothing is linked by time");
      return;
    }
    const int64_t a0 = internal::SatAdd(n0, l_.neuron_shift_ns);
    const int64_t a1 = internal::SatAdd(n1, l_.neuron_shift_ns);
    if (a1 < t0 || a0 > t1) {
      const int64_t gap = a0 > t1 ? internal::SatSub(a0, t1) : internal::SatSub(t0, a1);
      l_.warnings.push_back(fmt::format(
          "the Neuron profile's events and the torch trace's do not overlap once aligned (the "
          "profile {} {:.3f} ms {} the trace): different runs, or clocks that disagree; nothing "
          "is linked by time",
          a0 > t1 ? "begins" : "ends", static_cast<double>(gap) / 1e6,
          a0 > t1 ? "after the end of" : "before the start of"));
      l_.aligned = false;
    }
  }

  // The time rule, for what no id linked: a Neuron runtime call belongs to the innermost torch op
  // enclosing its start on the same thread (same pid and tid), else on any thread (the op that
  // began last); an execution with no runtime call of its own to the torch runtime call that began
  // last at or before it (its op), unless an op holding its start began later than that call (a
  // launch the torch trace did not record): then to the innermost such op.
  void LinkByTime() {
    std::map<std::pair<int64_t, int64_t>, uint32_t> torch_threads;
    std::vector<uint32_t> host_tracks;
    for (uint32_t k = 0; k < t_.tracks().size(); ++k) {
      const Track& tr = t_.tracks()[k];
      if (tr.kind != TrackKind::kThread || t_.processes()[tr.process].is_device) continue;
      host_tracks.push_back(k);
      torch_threads.try_emplace({t_.processes()[tr.process].pid, tr.tid}, k);
    }
    std::vector<uint32_t> torch_runtime;
    for (uint32_t i = 0; i < t_.slices().size(); ++i) {
      if (IsRuntime(t_.slices()[i].kind) && !l_.drop_torch[i]) torch_runtime.push_back(i);
    }
    std::stable_sort(torch_runtime.begin(), torch_runtime.end(), [&](uint32_t a, uint32_t b) {
      return t_.slices()[a].ts_ns < t_.slices()[b].ts_ns;
    });
    const auto any_thread = [&](int64_t ts) {
      uint32_t best = kNone;
      for (uint32_t k : host_tracks) {
        const uint32_t op = EnclosingOp(t_, k, ts);
        if (op != kNone && (best == kNone || t_.slices()[op].ts_ns > t_.slices()[best].ts_ns)) {
          best = op;
        }
      }
      return best;
    };
    for (uint32_t j = 0; j < n_.slices().size(); ++j) {
      const Slice& s = n_.slices()[j];
      if (l_.op_of[j] != kNone || l_.drop_neuron[j]) continue;
      const int64_t ts = internal::SatAdd(s.ts_ns, l_.neuron_shift_ns);
      uint32_t op = kNone;
      if (IsRuntime(s.kind)) {
        const Process& p = n_.processes()[n_.tracks()[s.track].process];
        // The Neuron reader keeps a host process's OS pid as its sort index (its pid is made
        // unique per instance).
        const auto it = torch_threads.find({p.sort_index, n_.tracks()[s.track].tid});
        if (it != torch_threads.end()) op = EnclosingOp(t_, it->second, ts);
        if (op == kNone) op = any_thread(ts);
      } else if (s.kind == ActivityKind::kKernel && n_.Link(j).runtime == kNone &&
                 n_.Str(n_.tracks()[s.track].name) != kCollectivesLane) {
        auto it = std::upper_bound(torch_runtime.begin(), torch_runtime.end(), ts,
                                   [&](int64_t v, uint32_t i) { return v < t_.slices()[i].ts_ns; });
        const uint32_t rt = it != torch_runtime.begin() ? *(it - 1) : kNone;
        const uint32_t holding = any_thread(ts);
        if (rt != kNone &&
            (holding == kNone || t_.slices()[rt].ts_ns >= t_.slices()[holding].ts_ns)) {
          l_.torch_runtime_of[j] = rt;
          op = TorchOpOf(t_, rt);
        } else {
          op = holding;
        }
      }
      if (op == kNone) continue;
      l_.op_of[j] = op;
      l_.rule[j] = LinkRule::kTime;
    }
  }

  // What was linked, among the runtime calls that launched an execution and the executions with no
  // runtime call of their own: the figures the merge reports.
  void Count() {
    std::vector<bool> launched(n_.slices().size(), false);
    for (uint32_t j = 0; j < n_.slices().size(); ++j) {
      const Slice& s = n_.slices()[j];
      if (s.kind != ActivityKind::kKernel) continue;
      const uint32_t rt = n_.Link(j).runtime;
      if (rt != kNone) launched[rt] = true;
      if (rt == kNone && n_.Str(n_.tracks()[s.track].name) != kCollectivesLane) launched[j] = true;
    }
    for (uint32_t j = 0; j < launched.size(); ++j) {
      if (!launched[j]) continue;
      if (l_.rule[j] == LinkRule::kId) ++l_.linked_by_id;
      if (l_.rule[j] == LinkRule::kTime) ++l_.linked_by_time;
      if (l_.rule[j] == LinkRule::kNone) ++l_.unlinked;
    }
    if (l_.unlinked > 0) {
      l_.warnings.push_back(fmt::format(
          "{} of the Neuron profile's executions (or the runtime calls that launched them) link to "
          "no framework op of the torch trace: their device time is in no op's NEURON columns",
          l_.unlinked));
    }
  }

  const Trace& t_;
  const Trace& n_;
  TorchNeuronLinks l_;
  std::vector<int64_t> pairs_;  // torch start - neuron start of id-linked runtime calls, as stored
};

}  // namespace

TorchNeuronLinks LinkTorchNeuron(const Trace& torch, const Trace& neuron) {
  return Linker(torch, neuron).Run();
}

}  // namespace opscope::import::neuron
