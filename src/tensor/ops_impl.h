// Implementations of every op in the dispatcher's table (one per OpId), defined in ops_*.cc.
// Each receives the op's tensor operands in ATen order and its attributes; the call is already
// recorded and was not intercepted.
#ifndef OPSCOPE_SRC_TENSOR_OPS_IMPL_H_
#define OPSCOPE_SRC_TENSOR_OPS_IMPL_H_

#include <span>
#include <vector>

#include "opscope/tensor.h"

namespace opscope::impl {

using Out = std::vector<Tensor>;
using In = std::span<const Tensor>;

// ops_pointwise.cc
Out Add(In in, const OpAttrs& a);
Out Sub(In in, const OpAttrs& a);
Out Mul(In in, const OpAttrs& a);
Out Div(In in, const OpAttrs& a);
Out Pow(In in, const OpAttrs& a);
Out Maximum(In in, const OpAttrs& a);
Out Minimum(In in, const OpAttrs& a);
Out Rsqrt(In in, const OpAttrs& a);
Out Sqrt(In in, const OpAttrs& a);
Out Exp(In in, const OpAttrs& a);
Out Neg(In in, const OpAttrs& a);
Out Log(In in, const OpAttrs& a);
Out Abs(In in, const OpAttrs& a);
Out Reciprocal(In in, const OpAttrs& a);
Out Relu(In in, const OpAttrs& a);
Out Tanh(In in, const OpAttrs& a);
Out Sigmoid(In in, const OpAttrs& a);
Out Silu(In in, const OpAttrs& a);
Out Gelu(In in, const OpAttrs& a);
// ops_reduce.cc
Out Sum(In in, const OpAttrs& a);
Out Mean(In in, const OpAttrs& a);
Out Amax(In in, const OpAttrs& a);
Out Amin(In in, const OpAttrs& a);
Out Mm(In in, const OpAttrs& a);
Out Bmm(In in, const OpAttrs& a);
Out Matmul(In in, const OpAttrs& a);
Out Softmax(In in, const OpAttrs& a);
Out SoftmaxKernel(In in, const OpAttrs& a);
Out LayerNorm(In in, const OpAttrs& a);
Out NativeLayerNorm(In in, const OpAttrs& a);
Out RmsNorm(In in, const OpAttrs& a);
Out FusedRmsNorm(In in, const OpAttrs& a);
// ops_memory.cc
Out To(In in, const OpAttrs& a);
Out ToCopy(In in, const OpAttrs& a);
Out Copy(In in, const OpAttrs& a);
Out Empty(In in, const OpAttrs& a);
Out EmptyStrided(In in, const OpAttrs& a);
Out EmptyLike(In in, const OpAttrs& a);
Out Zeros(In in, const OpAttrs& a);
Out Ones(In in, const OpAttrs& a);
Out Full(In in, const OpAttrs& a);
Out Fill(In in, const OpAttrs& a);
Out Zero(In in, const OpAttrs& a);
Out Arange(In in, const OpAttrs& a);
Out Randn(In in, const OpAttrs& a);
Out Normal(In in, const OpAttrs& a);
Out Item(In in, const OpAttrs& a);
Out LocalScalarDense(In in, const OpAttrs& a);
// ops_view.cc
Out View(In in, const OpAttrs& a);
Out Reshape(In in, const OpAttrs& a);
Out UnsafeView(In in, const OpAttrs& a);
Out Transpose(In in, const OpAttrs& a);
Out Permute(In in, const OpAttrs& a);
Out Slice(In in, const OpAttrs& a);
Out Narrow(In in, const OpAttrs& a);
Out Expand(In in, const OpAttrs& a);
Out Unsqueeze(In in, const OpAttrs& a);
Out Contiguous(In in, const OpAttrs& a);
Out Clone(In in, const OpAttrs& a);
Out T(In in, const OpAttrs& a);

}  // namespace opscope::impl

#endif  // OPSCOPE_SRC_TENSOR_OPS_IMPL_H_
