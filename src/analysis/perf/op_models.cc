// The op registry, the categorizer and the dispatch to each model's reader (see op_models.h).
#include "analysis/perf/op_models.h"

#include <unordered_map>
#include <utility>

#include "analysis/perf/op_model_readers.h"

namespace opscope::analysis {
namespace {

struct Entry {
  const char* name;
  ModelKind model;
  const char* category;
};

// Modeled ops (TraceLens op_to_perf_model_class_map, the part opscope implements).
constexpr Entry kModeled[] = {
    {"aten::mm", ModelKind::kMm, "GEMM"},
    {"aten::addmm", ModelKind::kAddmm, "GEMM"},
    {"aten::_scaled_mm", ModelKind::kScaledMm, "GEMM"},
    {"aten::bmm", ModelKind::kBmm, "GEMM"},
    {"aten::baddbmm", ModelKind::kBaddbmm, "GEMM"},
    {"aten::convolution", ModelKind::kConv, "CONV_fwd"},
    {"aten::convolution_backward", ModelKind::kConvBwd, "CONV_bwd"},
    {"aten::_scaled_dot_product_flash_attention", ModelKind::kSdpaFlash, "SDPA_fwd"},
    {"aten::_scaled_dot_product_efficient_attention", ModelKind::kSdpaEfficient, "SDPA_fwd"},
    {"aten::_scaled_dot_product_cudnn_attention", ModelKind::kSdpaEfficient, "SDPA_fwd"},
    {"FlashAttnFunc", ModelKind::kFlashAttention, "SDPA_fwd"},
    {"flash_attn::_flash_attn_forward", ModelKind::kFlashAttention, "SDPA_fwd"},
    {"flash_attn::_flash_attn_backward", ModelKind::kFlashAttentionBwd, "SDPA_bwd"},
    {"aten::copy", ModelKind::kUnary, "elementwise"},
    {"aten::copy_", ModelKind::kUnary, "elementwise"},
    {"aten::clamp_min", ModelKind::kUnary, "elementwise"},
    {"aten::clamp_min_", ModelKind::kUnary, "elementwise"},
    {"aten::clamp_max", ModelKind::kUnary, "elementwise"},
    {"aten::clamp_max_", ModelKind::kUnary, "elementwise"},
    {"aten::sigmoid", ModelKind::kUnary, "elementwise"},
    {"aten::rsqrt", ModelKind::kUnary, "elementwise"},
    {"aten::silu", ModelKind::kUnary, "elementwise"},
    {"aten::neg", ModelKind::kUnary, "elementwise"},
    {"aten::pow", ModelKind::kUnary, "elementwise"},
    {"aten::replication_pad1d", ModelKind::kReplicationPad, "elementwise"},
    {"aten::replication_pad2d", ModelKind::kReplicationPad, "elementwise"},
    {"aten::replication_pad3d", ModelKind::kReplicationPad, "elementwise"},
    {"aten::upsample_nearest1d", ModelKind::kUpsampleNearest, "elementwise"},
    {"aten::upsample_nearest2d", ModelKind::kUpsampleNearest, "elementwise"},
    {"aten::upsample_nearest3d", ModelKind::kUpsampleNearest, "elementwise"},
    {"aten::div", ModelKind::kBinary, "elementwise"},
    {"aten::div_", ModelKind::kBinary, "elementwise"},
    {"aten::mul", ModelKind::kBinary, "elementwise"},
    {"aten::mul_", ModelKind::kBinary, "elementwise"},
    {"aten::add", ModelKind::kBinary, "elementwise"},
    {"aten::add_", ModelKind::kBinary, "elementwise"},
    {"aten::sigmoid_backward", ModelKind::kBinary, "elementwise"},
    {"aten::threshold_backward", ModelKind::kBinary, "elementwise"},
    {"aten::batch_norm", ModelKind::kBatchNorm, "NORM_fwd"},
    {"aten::native_batch_norm", ModelKind::kBatchNorm, "NORM_fwd"},
    {"aten::miopen_batch_norm", ModelKind::kBatchNorm, "NORM_fwd"},
    {"aten::cudnn_batch_norm", ModelKind::kBatchNorm, "NORM_fwd"},
    {"aten::layer_norm", ModelKind::kLayerNorm, "NORM_fwd"},
    {"aten::native_layer_norm", ModelKind::kLayerNorm, "NORM_fwd"},
    {"aten::miopen_layer_norm", ModelKind::kLayerNorm, "NORM_fwd"},
    {"aten::cudnn_layer_norm", ModelKind::kLayerNorm, "NORM_fwd"},
    {"aten::group_norm", ModelKind::kGroupNorm, "NORM_fwd"},
    {"aten::native_group_norm", ModelKind::kGroupNorm, "NORM_fwd"},
    {"aten::miopen_group_norm", ModelKind::kGroupNorm, "NORM_fwd"},
    {"aten::cudnn_group_norm", ModelKind::kGroupNorm, "NORM_fwd"},
    {"aten::instance_norm", ModelKind::kInstanceNorm, "NORM_fwd"},
    {"aten::native_instance_norm", ModelKind::kInstanceNorm, "NORM_fwd"},
    {"aten::miopen_instance_norm", ModelKind::kInstanceNorm, "NORM_fwd"},
    {"aten::cudnn_instance_norm", ModelKind::kInstanceNorm, "NORM_fwd"},
    {"aten::_fused_rms_norm", ModelKind::kRmsNorm, "NORM_fwd"},
    {"aten::batch_norm_backward", ModelKind::kBatchNormBwd, "NORM_bwd"},
    {"aten::native_batch_norm_backward", ModelKind::kBatchNormBwd, "NORM_bwd"},
    {"aten::miopen_batch_norm_backward", ModelKind::kBatchNormBwd, "NORM_bwd"},
    {"aten::cudnn_batch_norm_backward", ModelKind::kBatchNormBwd, "NORM_bwd"},
    {"aten::layer_norm_backward", ModelKind::kLayerNormBwd, "NORM_bwd"},
    {"aten::native_layer_norm_backward", ModelKind::kLayerNormBwd, "NORM_bwd"},
    {"aten::miopen_layer_norm_backward", ModelKind::kLayerNormBwd, "NORM_bwd"},
    {"aten::cudnn_layer_norm_backward", ModelKind::kLayerNormBwd, "NORM_bwd"},
    {"aten::group_norm_backward", ModelKind::kGroupNormBwd, "NORM_bwd"},
    {"aten::native_group_norm_backward", ModelKind::kGroupNormBwd, "NORM_bwd"},
    {"aten::miopen_group_norm_backward", ModelKind::kGroupNormBwd, "NORM_bwd"},
    {"aten::cudnn_group_norm_backward", ModelKind::kGroupNormBwd, "NORM_bwd"},
    {"aten::sum", ModelKind::kReduce, "reduce"},
    {"aten::mean", ModelKind::kReduce, "reduce"},
    {"aten::max", ModelKind::kReduce, "reduce"},
    {"aten::min", ModelKind::kReduce, "reduce"},
    {"aten::norm", ModelKind::kReduce, "reduce"},
    {"aten::linalg_norm", ModelKind::kReduce, "reduce"},
    {"aten::std", ModelKind::kReduce, "reduce"},
    {"aten::var", ModelKind::kReduce, "reduce"},
    {"aten::logsumexp", ModelKind::kReduce, "reduce"},
    {"aten::cumsum", ModelKind::kReduce, "reduce"},
    {"aten::cumprod", ModelKind::kReduce, "reduce"},
    {"aten::amin", ModelKind::kReduce, "reduce"},
    {"aten::amax", ModelKind::kReduce, "reduce"},
};

// Ops TraceLens categorizes without a model opscope implements (its CATEGORY_ONLY_OP_MAPPING and
// the categories of the vendor-library models left out; docs/perf-model.md lists them).
constexpr Entry kCategoryOnly[] = {
    {"aten::miopen_convolution", ModelKind::kNone, "CONV_fwd"},
    {"aten::cudnn_convolution", ModelKind::kNone, "CONV_fwd"},
    {"FlashAttnFuncBackward", ModelKind::kNone, "SDPA_bwd"},
    {"FusedAttnFuncBackward", ModelKind::kNone, "SDPA_bwd"},
    {"aten::_scaled_dot_product_cudnn_attention_backward", ModelKind::kNone, "SDPA_bwd"},
    {"aten::_scaled_dot_product_efficient_attention_backward", ModelKind::kNone, "SDPA_bwd"},
    {"aten::_scaled_dot_product_flash_attention_backward", ModelKind::kNone, "SDPA_bwd"},
    {"aten::_efficient_attention_forward", ModelKind::kNone, "SDPA_fwd"},
    {"aten::_efficient_attention_backward", ModelKind::kNone, "SDPA_bwd"},
    {"flash_attn::_flash_attn_varlen_forward", ModelKind::kNone, "SDPA_fwd"},
    {"flash_attn::_flash_attn_varlen_backward", ModelKind::kNone, "SDPA_bwd"},
    {"flash_attn_3::fwd", ModelKind::kNone, "SDPA_fwd"},
    {"aiter::_flash_attn_forward", ModelKind::kNone, "SDPA_fwd"},
    {"aiter::_flash_attn_backward", ModelKind::kNone, "SDPA_bwd"},
    {"aiter::mha_fwd", ModelKind::kNone, "SDPA_fwd"},
    {"aiter::mha_bwd", ModelKind::kNone, "SDPA_bwd"},
    {"tex_ts::te_gemm_ts", ModelKind::kNone, "GEMM"},
    {"vllm::gemm_with_dynamic_quant", ModelKind::kNone, "GEMM"},
    {"aten::instance_norm_backward", ModelKind::kNone, "NORM_bwd"},
    {"aten::native_instance_norm_backward", ModelKind::kNone, "NORM_bwd"},
    {"aten::rms_norm_backward", ModelKind::kNone, "NORM_bwd"},
    {"aten::native_rms_norm_backward", ModelKind::kNone, "NORM_bwd"},
    {"aten::_fused_rms_norm_backward", ModelKind::kNone, "NORM_bwd"},
};

std::string_view SheetOf(ModelKind k, std::string_view category) {
  switch (k) {
    case ModelKind::kNone:
      return "";
    case ModelKind::kUnary:
    case ModelKind::kUpsampleNearest:
    case ModelKind::kReplicationPad:
      return "UnaryElementwise";
    case ModelKind::kBinary:
      return "BinaryElementwise";
    case ModelKind::kReduce:
      return "Reduce_fwd";
    case ModelKind::kBatchNorm:
    case ModelKind::kLayerNorm:
    case ModelKind::kGroupNorm:
    case ModelKind::kInstanceNorm:
    case ModelKind::kRmsNorm:
    case ModelKind::kBatchNormBwd:
    case ModelKind::kLayerNormBwd:
    case ModelKind::kGroupNormBwd:
      return "Normalization";
    default:
      return category;  // GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd
  }
}

const std::unordered_map<std::string_view, OpKind>& Registry() {
  static const auto* registry = [] {
    auto* m = new std::unordered_map<std::string_view, OpKind>();
    for (const Entry& e : kModeled)
      (*m)[e.name] = {e.model, e.category, SheetOf(e.model, e.category)};
    for (const Entry& e : kCategoryOnly) (*m)[e.name] = {ModelKind::kNone, e.category, ""};
    return m;
  }();
  return *registry;
}

}  // namespace

OpKind LookupOp(std::string_view name) {
  const auto& r = Registry();
  auto it = r.find(name);
  return it == r.end() ? OpKind{} : it->second;
}

std::string_view CategorizeOp(std::string_view name, std::string_view first_kernel) {
  const OpKind k = LookupOp(name);
  if (!k.category.empty()) return k.category;
  if (name.starts_with("triton")) return "triton";
  if (name.starts_with("record_param_comms")) return "record_param_comms";
  if (first_kernel.starts_with("void at::native")) {
    if (first_kernel.find("elementwise") != std::string_view::npos) return "elementwise";
    if (first_kernel.find("reduce") != std::string_view::npos) return "reduce";
    if (first_kernel.find("multi_tensor_apply") != std::string_view::npos) {
      return "multi_tensor_apply";
    }
  }
  return "other";
}

OpModel EvaluateOpModel(ModelKind kind, std::string_view name, const OpArgs& args) {
  OpModel m;
  switch (kind) {
    case ModelKind::kNone:
      m.status = Status::InvalidArgument("no perf model");
      break;
    case ModelKind::kMm:
    case ModelKind::kAddmm:
    case ModelKind::kScaledMm:
    case ModelKind::kBmm:
    case ModelKind::kBaddbmm:
      m.status = readers::ReadGemm(kind, args, &m);
      break;
    case ModelKind::kConv:
    case ModelKind::kConvBwd:
      m.status = readers::ReadConv(kind == ModelKind::kConvBwd, args, &m);
      break;
    case ModelKind::kSdpaFlash:
    case ModelKind::kSdpaEfficient:
    case ModelKind::kFlashAttention:
    case ModelKind::kFlashAttentionBwd:
      m.status = readers::ReadAttention(kind, args, &m);
      break;
    case ModelKind::kUnary:
      m.status = readers::ReadUnary(args, &m);
      break;
    case ModelKind::kUpsampleNearest:
    case ModelKind::kReplicationPad:
      m.status = readers::ReadResample(kind, args, &m);
      break;
    case ModelKind::kBinary:
      m.status = readers::ReadBinary(args, &m);
      break;
    case ModelKind::kReduce:
      m.status = readers::ReadReduce(name, args, &m);
      break;
    default:
      m.status = readers::ReadNorm(kind, name, args, &m);
      break;
  }
  if (!m.status.ok()) {
    Status status = std::move(m.status);
    m = OpModel();
    m.status = std::move(status);
  }
  return m;
}

}  // namespace opscope::analysis
