// Which op names TraceLens models and how: the op -> category registry, the categorizer with its
// kernel-name fallback, and each model's reading of an op's args into FLOPs, bytes and the
// parameters TraceLens groups its perf-report sheets by (TraceLens/PerfModel/torch_op_mapping.py
// and perf_model.py). The formulas themselves live in perf_formulas.h.
//
//   OpKind k = LookupOp("aten::addmm");            // {kAddmm, "GEMM", "GEMM"}
//   OpModel m = EvaluateOpModel(k.model, "aten::addmm", args);
//   if (m.status.ok()) use(m.flops, m.bytes, m.compute_spec);
//
// Thread safety: pure functions over constant tables.
#ifndef OPSCOPE_ANALYSIS_PERF_OP_MODELS_H_
#define OPSCOPE_ANALYSIS_PERF_OP_MODELS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/perf/op_args.h"
#include "opscope/status.h"

namespace opscope::analysis {

// One enumerator per TraceLens perf-model class opscope implements.
enum class ModelKind : uint8_t {
  kNone,
  kMm,
  kAddmm,
  kScaledMm,
  kBmm,
  kBaddbmm,
  kConv,
  kConvBwd,
  kSdpaFlash,          // aten::_scaled_dot_product_flash_attention
  kSdpaEfficient,      // aten::_scaled_dot_product_{efficient,cudnn}_attention
  kFlashAttention,     // FlashAttnFunc, flash_attn::_flash_attn_forward
  kFlashAttentionBwd,  // flash_attn::_flash_attn_backward
  kUnary,
  kUpsampleNearest,  // aten::upsample_nearest{1,2,3}d
  kReplicationPad,   // aten::replication_pad{1,2,3}d
  kBinary,
  kBatchNorm,
  kLayerNorm,
  kGroupNorm,
  kInstanceNorm,
  kRmsNorm,
  kBatchNormBwd,
  kLayerNormBwd,
  kGroupNormBwd,
  kReduce,
};

// What is known about an op name: its category and, when it has one, its model.
struct OpKind {
  ModelKind model = ModelKind::kNone;
  std::string_view category;  // TraceLens's category; "" when only the kernel fallback can tell
  std::string_view sheet;     // TraceLens's perf-report sheet of a modeled op ("GEMM", ...)
};

OpKind LookupOp(std::string_view name);

// TraceLens categorize_torch_op: the registry, then name patterns (^triton -> "triton",
// ^record_param_comms), then the op's first kernel ("void at::native..." containing
// "elementwise" / "reduce" / "multi_tensor_apply"), else "other".
std::string_view CategorizeOp(std::string_view name, std::string_view first_kernel);

// One op instance read through its model.
struct OpModel {
  // Ok, or InvalidArgument saying why the args do not fit the model ("no Input type"); the
  // figures below are zero / empty then.
  Status status;
  double flops = 0;
  std::optional<double> bytes;  // nullopt when a dtype's size is unknown (e.g. "int")
  std::string compute_spec;     // "matrix_bf16", "vector_fp32"; "" when the precision is unknown
  // TraceLens's "param: " columns as Python prints them ("M" -> "8944", "dtype_A_B" ->
  // "('float', 'float')"); an op's instances with equal params share a perf-report row.
  std::vector<std::pair<std::string, std::string>> params;
};

OpModel EvaluateOpModel(ModelKind kind, std::string_view name, const OpArgs& args);

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_OP_MODELS_H_
