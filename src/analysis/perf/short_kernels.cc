// TraceLens's short-kernel study (generate_perf_report_pytorch.get_dfs_short_kernels): kernels
// shorter than a threshold, as a histogram of their durations and a table by the cpu_op that
// launched them, its args and the kernel's name.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analysis/perf/perf_model_internal.h"

namespace opscope::analysis {
namespace {

// The kernel's cpu_op: the first cpu_op above the runtime call that launched it (any kind of
// slice in between), as TraceLens's get_kernel_details walks it; kNone without a runtime call.
uint32_t ParentCpuOp(const Trace& trace, uint32_t kernel) {
  const uint32_t runtime = trace.Link(kernel).runtime;
  if (runtime == kNone) return kNone;
  const auto& slices = trace.slices();
  for (uint32_t p = slices[runtime].parent; p != kNone; p = slices[p].parent) {
    if (slices[p].kind == ActivityKind::kCpuOp) return p;
  }
  return kNone;
}

// numpy.histogram(values, bins): equal-width bins over [min, max] (widened by 0.5 each way when
// all values are equal), the last bin closed on the right.
std::vector<ShortKernels::Bin> Histogram(const std::vector<double>& values, int bins) {
  std::vector<ShortKernels::Bin> out;
  if (values.empty() || bins <= 0) return out;
  auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = *lo_it, hi = *hi_it;
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double width = (hi - lo) / bins;
  for (int i = 0; i < bins; ++i) {
    out.push_back({lo + width * i, i + 1 == bins ? hi : lo + width * (i + 1), 0});
  }
  for (double v : values) {
    auto b = static_cast<int64_t>((v - lo) / (hi - lo) * bins);
    b = std::clamp<int64_t>(b, 0, bins - 1);
    // Floating-point rounding can put a value on the wrong side of an edge; edges decide.
    if (b > 0 && v < out[static_cast<size_t>(b)].start_us) --b;
    if (b + 1 < bins && v >= out[static_cast<size_t>(b) + 1].start_us) ++b;
    out[static_cast<size_t>(b)].count += 1;
  }
  return out;
}

}  // namespace

ShortKernels StudyShortKernels(const Trace& trace, ArgsCache* args, int64_t total_ns,
                               double threshold_us, int bins) {
  ShortKernels out;
  out.threshold_us = threshold_us;
  const auto& slices = trace.slices();
  std::vector<double> durations_us;
  struct Key {
    StringId op;
    const ArgsInfo* args;
    StringId kernel;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return (std::hash<const void*>{}(k.args) * 31 + k.op) * 31 + k.kernel;
    }
  };
  std::unordered_map<Key, size_t, KeyHash> index;
  std::unordered_map<uint32_t, const ArgsInfo*> op_args;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& k = slices[i];
    if (k.kind != ActivityKind::kKernel) continue;
    const double us = static_cast<double>(k.dur_ns) / 1e3;
    if (!(us < threshold_us)) continue;
    durations_us.push_back(us);
    const uint32_t op = ParentCpuOp(trace, i);
    if (op == kNone) continue;
    auto [ait, afresh] = op_args.try_emplace(op, nullptr);
    if (afresh) ait->second = args->Get(op);
    const ArgsInfo& a = *ait->second;
    // pandas drops groups with a missing key: an op without these args has no row.
    if (!a.args.has_dims || !a.args.has_strides || !a.args.has_concrete) continue;
    auto [it, fresh] = index.try_emplace(Key{slices[op].name, &a, k.name}, out.rows.size());
    if (fresh) {
      out.rows.push_back({std::string(trace.Str(slices[op].name)), a.dims, a.strides, a.concrete,
                          std::string(trace.Str(k.name)), 0, 0, 0});
    }
    out.rows[it->second].count += 1;
    out.rows[it->second].sum_ns += k.dur_ns;
  }
  out.kernels = static_cast<int64_t>(durations_us.size());
  for (auto& r : out.rows) {
    r.percent_of_total =
        total_ns > 0 ? 100.0 * static_cast<double>(r.sum_ns) / static_cast<double>(total_ns) : 0;
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const auto& a, const auto& b) { return a.sum_ns > b.sum_ns; });
  out.bins = Histogram(durations_us, bins);
  return out;
}

}  // namespace opscope::analysis
