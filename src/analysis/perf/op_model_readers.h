// Each TraceLens model's reading of an op's args (internal to op_models.cc). A reader fills
// OpModel's flops, bytes, compute spec and params and returns ok, or returns an InvalidArgument
// status saying what is missing or wrong where the matching TraceLens class's get_param_details
// (or its flops/bytes) would raise (`*m` is then partly filled and to be dropped).
#ifndef OPSCOPE_ANALYSIS_PERF_OP_MODEL_READERS_H_
#define OPSCOPE_ANALYSIS_PERF_OP_MODEL_READERS_H_

#include <string_view>

#include "analysis/perf/op_args.h"
#include "analysis/perf/op_models.h"
#include "opscope/status.h"

namespace opscope::analysis::readers {

Status ReadGemm(ModelKind kind, const OpArgs& args, OpModel* m);
Status ReadConv(bool backward, const OpArgs& args, OpModel* m);
Status ReadAttention(ModelKind kind, const OpArgs& args, OpModel* m);
Status ReadUnary(const OpArgs& args, OpModel* m);
Status ReadResample(ModelKind kind, const OpArgs& args, OpModel* m);
Status ReadBinary(const OpArgs& args, OpModel* m);
Status ReadNorm(ModelKind kind, std::string_view name, const OpArgs& args, OpModel* m);
Status ReadReduce(std::string_view name, const OpArgs& args, OpModel* m);

}  // namespace opscope::analysis::readers

#endif  // OPSCOPE_ANALYSIS_PERF_OP_MODEL_READERS_H_
