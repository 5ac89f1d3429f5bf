// The perf model's tables from its instances: ops by category, ops with unique args, and the
// per-op rows with the roofline (see perf_analysis.h and docs/perf-model.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "analysis/perf/perf_model_internal.h"

namespace opscope::analysis {
namespace {

// pandas' mean, median, min and max, NaN skipped.
PerfStats StatsOf(std::vector<double> v) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  PerfStats s;
  if (v.empty()) return s;
  double sum = 0;
  s.min = s.max = v.front();
  for (double x : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  const size_t n = v.size();
  s.mean = sum / static_cast<double>(n);
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  s.median = *mid;
  if (n % 2 == 0) s.median = (s.median + *std::max_element(v.begin(), mid)) / 2;
  return s;
}

// Kernels by (name, stream) over some of an instance's activity. Rows have a few kernel names,
// so a linear search beats a map.
class KernelTally {
 public:
  void Add(const Trace& trace, const Instances& in, const OpInstance& op, bool direct_only) {
    for (uint32_t k = op.begin; k < op.end; ++k) {
      const ActivityOfOp& p = in.pairs[k];
      if (direct_only && !p.direct_non_nccl()) continue;
      const Slice& s = trace.slices()[p.activity];
      const int64_t stream = s.track < trace.tracks().size() ? trace.tracks()[s.track].tid : 0;
      size_t i = 0;
      while (i < keys_.size() && (keys_[i].first != s.name || keys_[i].second != stream)) ++i;
      if (i == keys_.size()) {
        keys_.emplace_back(s.name, stream);
        briefs_.push_back({std::string(trace.Str(s.name)), stream, 0, 0});
      }
      briefs_[i].count += 1;
      briefs_[i].total_ns += s.dur_ns;
    }
  }
  std::vector<KernelBrief> Take() {
    std::stable_sort(briefs_.begin(), briefs_.end(),
                     [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
    return std::move(briefs_);
  }

 private:
  std::vector<std::pair<StringId, int64_t>> keys_;
  std::vector<KernelBrief> briefs_;
};

// "The same op on the same thread with the same args" (ArgsInfo is shared by equal args).
struct OpKey {
  StringId name;
  uint32_t track;
  const ArgsInfo* args;
  std::string_view category;
  bool operator==(const OpKey&) const = default;
};
struct OpKeyHash {
  size_t operator()(const OpKey& k) const noexcept {
    return (std::hash<const void*>{}(k.args) * 31 + k.name) * 31 + k.track;
  }
};

OpKey KeyOf(const Trace& trace, const OpInstance& op, bool with_category) {
  const Slice& s = trace.slices()[op.slice];
  return {s.name, s.track, op.args, with_category ? op.category : std::string_view()};
}

template <typename Row>
void SortAndPercent(std::vector<Row>* rows, int64_t Row::*time) {
  std::sort(rows->begin(), rows->end(), [&](const Row& a, const Row& b) {
    if (a.*time != b.*time) return a.*time > b.*time;
    return a.example_slice < b.example_slice;
  });
  double total = 0;
  for (const Row& r : *rows) total += static_cast<double>(r.*time);
  for (Row& r : *rows) r.percent = total > 0 ? 100.0 * static_cast<double>(r.*time) / total : 0;
}

// TraceLens's roofline: the op is compute-bound when its time at the compute peak is at least its
// time at the memory peak; percentages are achieved over peak.
void ApplyRoofline(const DeviceSpec& spec, double flops, double bytes, PerfModelRow* row) {
  const double peak = spec.PeakTflops(row->compute_spec);
  if (peak > 0 && !std::isnan(row->tflops_per_s.mean)) {
    row->pct_compute_roof = 100 * row->tflops_per_s.mean / peak;
  }
  if (spec.mem_bw_gbps > 0 && !std::isnan(row->tb_per_s.mean)) {
    row->pct_memory_roof = 100 * row->tb_per_s.mean * 1e3 / spec.mem_bw_gbps;
  }
  if (peak > 0 && spec.mem_bw_gbps > 0 && flops > 0 && !std::isnan(bytes)) {
    const double compute_s = flops / (peak * 1e12), memory_s = bytes / (spec.mem_bw_gbps * 1e9);
    row->bound = compute_s >= memory_s ? "compute" : "memory";
  }
}

}  // namespace

std::vector<CategoryTime> OpsByCategory(const Trace& trace, const Instances& in) {
  (void)trace;
  std::vector<CategoryTime> rows;
  std::unordered_map<std::string_view, size_t> index;
  for (uint32_t i : in.launchers) {
    const OpInstance& op = in.ops[i];
    auto [it, fresh] = index.try_emplace(op.category, rows.size());
    if (fresh) rows.push_back({std::string(op.category), 0, 0, 0});
    rows[it->second].count += 1;
    rows[it->second].direct_ns += op.direct_ns;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.direct_ns > b.direct_ns; });
  double total = 0;
  for (const auto& r : rows) total += static_cast<double>(r.direct_ns);
  for (auto& r : rows) r.percent = total > 0 ? 100.0 * static_cast<double>(r.direct_ns) / total : 0;
  return rows;
}

std::vector<UniqueArgsRow> UniqueArgs(const Trace& trace, const Instances& in) {
  std::vector<UniqueArgsRow> rows;
  std::vector<std::vector<double>> direct_us;
  std::vector<KernelTally> kernels;
  std::unordered_map<OpKey, size_t, OpKeyHash> index;
  for (uint32_t i : in.launchers) {
    const OpInstance& op = in.ops[i];
    auto [it, fresh] = index.try_emplace(KeyOf(trace, op, false), rows.size());
    if (fresh) {
      UniqueArgsRow r;
      r.name = std::string(trace.Str(trace.slices()[op.slice].name));
      r.category = std::string(op.category);
      r.input_dims = op.args->dims;
      r.dtypes = op.args->types;
      r.strides = op.args->strides;
      r.concrete = op.args->concrete;
      r.example_slice = op.slice;
      rows.push_back(std::move(r));
      direct_us.emplace_back();
      kernels.emplace_back();
    }
    UniqueArgsRow& r = rows[it->second];
    r.count += 1;
    r.direct_ns_sum += op.direct_ns;
    r.subtree_ns_sum += op.subtree_ns;
    direct_us[it->second].push_back(static_cast<double>(op.direct_ns) / 1e3);
    kernels[it->second].Add(trace, in, op, /*direct_only=*/true);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].direct_us = StatsOf(std::move(direct_us[i]));
    rows[i].kernels = kernels[i].Take();
  }
  SortAndPercent(&rows, &UniqueArgsRow::direct_ns_sum);
  return rows;
}

namespace {

// One modeled row's sums while its instances are folded in.
struct ModeledAcc {
  std::vector<double> tflops, tbs, kernel_us;
  KernelTally kernels;
  double flops = 0, bytes = kNaN;
};

// Which row each op instance folds into: by the op's key (name and args), or by its model's
// params (equal params share a row even when their args differ outside the params).
class ModeledRowIndex {
 public:
  explicit ModeledRowIndex(bool by_params) : by_params_(by_params) {}

  // The row of `op` and whether it is new (then it is row `next`, the row count so far).
  std::pair<size_t, bool> Find(const Trace& trace, const OpInstance& op, std::string_view name,
                               size_t next) {
    if (!by_params_) {
      auto [k, fresh] = index_.try_emplace(KeyOf(trace, op, true), next);
      return {k->second, fresh};
    }
    auto [m, m_fresh] = by_model_.try_emplace(op.model, next);
    if (!m_fresh) return {m->second, false};
    std::string key(name);
    for (const auto& [k, v] : op.model->params) key += '\x1f' + k + '=' + v;
    auto [p, p_fresh] = by_params_index_.try_emplace(std::move(key), next);
    m->second = p->second;
    return {p->second, p_fresh};
  }

 private:
  const bool by_params_;
  std::unordered_map<OpKey, size_t, OpKeyHash> index_;
  std::unordered_map<std::string, size_t> by_params_index_;
  std::unordered_map<const OpModel*, size_t> by_model_;  // sheets: a model reading's row
};

// A new row for `op` (its first instance), with the model's figures when it has one.
PerfModelRow StartModeledRow(const OpInstance& op, std::string_view name, bool modeled,
                             ModeledAcc* a) {
  PerfModelRow r;
  r.name = std::string(name);
  r.category = std::string(op.category);
  r.sheet = std::string(LookupOp(name).sheet);
  r.input_dims = op.args->dims;
  r.dtypes = op.args->types;
  r.strides = op.args->strides;
  r.concrete = op.args->concrete;
  r.example_slice = op.slice;
  r.has_model = modeled;
  if (op.model != nullptr && !modeled) r.model_error = op.model->status.message();
  if (!modeled) return r;
  const OpModel& m = *op.model;
  r.compute_spec = m.compute_spec;
  r.params = m.params;
  r.gflops = m.flops / 1e9;
  a->flops = m.flops;
  if (m.bytes) {
    a->bytes = *m.bytes;
    r.data_moved_mb = *m.bytes / (1024.0 * 1024.0);
    r.flops_per_byte = *m.bytes > 0 ? m.flops / *m.bytes : kNaN;
  }
  return r;
}

// Folds one instance's time (its kernels' subtree) into its row.
void AddModeledInstance(const Trace& trace, const Instances& in, const OpInstance& op,
                        PerfModelRow* r, ModeledAcc* a) {
  r->count += 1;
  r->kernel_time_ns_sum += op.subtree_ns;
  const double seconds = static_cast<double>(op.subtree_ns) / 1e9;
  a->kernel_us.push_back(static_cast<double>(op.subtree_ns) / 1e3);
  a->tflops.push_back(r->has_model && seconds > 0 ? a->flops / 1e12 / seconds : kNaN);
  a->tbs.push_back(seconds > 0 && !std::isnan(a->bytes) ? a->bytes / 1e12 / seconds : kNaN);
  a->kernels.Add(trace, in, op, /*direct_only=*/false);
}

}  // namespace

std::vector<PerfModelRow> ModeledRows(const Trace& trace, const Instances& in,
                                      const std::vector<uint32_t>& ops, bool by_params,
                                      const std::optional<DeviceSpec>& device) {
  std::vector<PerfModelRow> rows;
  std::vector<ModeledAcc> acc;
  ModeledRowIndex index(by_params);
  for (uint32_t oi : ops) {
    const OpInstance& op = in.ops[oi];
    const bool modeled = op.model != nullptr && op.model->status.ok();
    if (by_params && !modeled) continue;
    const std::string_view name = trace.Str(trace.slices()[op.slice].name);
    const auto [row, fresh] = index.Find(trace, op, name, rows.size());
    if (fresh) {
      acc.emplace_back();
      rows.push_back(StartModeledRow(op, name, modeled, &acc.back()));
    }
    AddModeledInstance(trace, in, op, &rows[row], &acc[row]);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    PerfModelRow& r = rows[i];
    r.tflops_per_s = StatsOf(std::move(acc[i].tflops));
    r.tb_per_s = StatsOf(std::move(acc[i].tbs));
    r.kernel_time_us = StatsOf(std::move(acc[i].kernel_us));
    r.kernels = acc[i].kernels.Take();
    if (device && r.has_model) ApplyRoofline(*device, acc[i].flops, acc[i].bytes, &r);
  }
  SortAndPercent(&rows, &PerfModelRow::kernel_time_ns_sum);
  return rows;
}

}  // namespace opscope::analysis
