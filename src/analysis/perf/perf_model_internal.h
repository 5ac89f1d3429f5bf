// The perf model's per-instance records, passed from the collection step (perf_model.cc) to the
// aggregation into rows (perf_model_rows.cc). Internal to the analysis library.
#ifndef OPSCOPE_ANALYSIS_PERF_PERF_MODEL_INTERNAL_H_
#define OPSCOPE_ANALYSIS_PERF_PERF_MODEL_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/perf/op_args.h"
#include "analysis/perf/op_models.h"
#include "opscope/perf_analysis.h"

namespace opscope::analysis {

// One op's args, parsed once per distinct set of values and shared by every instance with them:
// instances have equal args exactly when they point to the same ArgsInfo.
struct ArgsInfo {
  OpArgs args;
  std::string dims, types, strides, concrete;  // display texts ("" when absent)
};

// Parses each slice's args once per distinct values. Not thread-safe.
class ArgsCache {
 public:
  explicit ArgsCache(const Trace& trace) : trace_(trace) {}
  // The args of `slice` (an empty ArgsInfo when it has none or they do not parse).
  const ArgsInfo* Get(uint32_t slice);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  const Trace& trace_;
  OpArgsParser parser_;
  std::unordered_map<std::string, std::unique_ptr<ArgsInfo>, Hash, std::equal_to<>> by_key_;
  ArgsInfo empty_;
};

// One device activity (kernel, memcpy, memset slice) under one op.
struct ActivityOfOp {
  enum : uint8_t { kDirect = 1, kNccl = 2 };
  uint32_t op;
  uint32_t activity;
  uint8_t flags;  // kDirect: the op launched it itself; kNccl: a collective kernel
  bool direct_non_nccl() const { return (flags & (kDirect | kNccl)) == kDirect; }
};

// An op instance. Its activity is pairs[begin, end) of Instances::pairs.
struct OpInstance {
  uint32_t slice = kNone;
  const ArgsInfo* args = nullptr;
  int64_t subtree_ns = 0;  // union of the activity anywhere under the op
  int64_t direct_ns = 0;   // union of the non-NCCL activity it launched itself
  uint32_t begin = 0, end = 0;
  std::string_view category;
  const OpModel* model = nullptr;  // modeled ops: their model's reading of the args
};

struct Instances {
  std::vector<ActivityOfOp> pairs;  // by op
  std::vector<OpInstance> ops;      // every op any table covers
  std::vector<uint32_t> launchers;  // kernel launchers (TraceLens get_kernel_launchers)
  std::vector<uint32_t> modeled;    // every op with a model (the perf-report sheets)
  std::vector<uint32_t> unified;    // unified_perf_summary's collected ops
  int64_t failed_models = 0;
  int64_t total_ns = 0;  // the device timeline's total: last end - first start of linked activity
};

// Collects the instances (perf_model.cc). `models` owns the OpModels the instances point to.
Instances CollectInstances(const Trace& trace, ArgsCache* args,
                           std::vector<std::unique_ptr<OpModel>>* models);

// Aggregation into the PerfModel's tables (perf_model_rows.cc).
std::vector<CategoryTime> OpsByCategory(const Trace& trace, const Instances& in);
std::vector<UniqueArgsRow> UniqueArgs(const Trace& trace, const Instances& in);
std::vector<PerfModelRow> ModeledRows(const Trace& trace, const Instances& in,
                                      const std::vector<uint32_t>& ops, bool by_params,
                                      const std::optional<DeviceSpec>& device);
ShortKernels StudyShortKernels(const Trace& trace, ArgsCache* args, int64_t total_ns,
                               double threshold_us, int bins);

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_PERF_MODEL_INTERNAL_H_
