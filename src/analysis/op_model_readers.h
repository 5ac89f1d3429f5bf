// Each TraceLens model's reading of an op's args (internal to op_models.cc). A reader fills
// OpModel's flops, bytes, compute spec and params, and returns false with `*error` set where the
// matching TraceLens class's get_param_details (or its flops/bytes) would raise.
#ifndef OPSCOPE_ANALYSIS_OP_MODEL_READERS_H_
#define OPSCOPE_ANALYSIS_OP_MODEL_READERS_H_

#include <string>
#include <string_view>

#include "analysis/op_args.h"
#include "analysis/op_models.h"

namespace opscope::analysis::readers {

bool ReadGemm(ModelKind kind, const OpArgs& args, OpModel* m, std::string* error);
bool ReadConv(bool backward, const OpArgs& args, OpModel* m, std::string* error);
bool ReadAttention(ModelKind kind, const OpArgs& args, OpModel* m, std::string* error);
bool ReadUnary(const OpArgs& args, OpModel* m, std::string* error);
bool ReadBinary(const OpArgs& args, OpModel* m, std::string* error);
bool ReadNorm(ModelKind kind, std::string_view name, const OpArgs& args, OpModel* m,
              std::string* error);
bool ReadReduce(std::string_view name, const OpArgs& args, OpModel* m, std::string* error);

}  // namespace opscope::analysis::readers

#endif  // OPSCOPE_ANALYSIS_OP_MODEL_READERS_H_
