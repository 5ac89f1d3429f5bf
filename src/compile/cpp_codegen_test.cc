// Generated C++ kernels, compiled with the system compiler and run on host buffers, against the
// reference interpreter; the kernel cache (memory, disk, failures).
#include "compile/cpp_codegen.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "compile/graph_interpreter.h"
#include "compile/kernel_cache.h"
#include "compile/program.h"

namespace opscope::compiler {
namespace {

Operand V(int v) { return Operand::Value(v); }
Operand S(double s) { return Operand::Scalar(s); }

class CodegenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope-codegen-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    KernelCache::Global().ClearMemory();
  }
  void TearDown() override {
    KernelCache::Global().ClearMemory();
    std::filesystem::remove_all(dir_);
  }

  // Builds, compiles and runs `g` on `inputs` (laid out with each input's strides); compares
  // every output with the interpreter. Returns the program for further checks.
  Program CompileAndCheck(Graph g, const std::vector<std::vector<float>>& inputs,
                          double tol = 1e-4) {
    std::vector<const float*> in_ptrs;
    for (const auto& v : inputs) in_ptrs.push_back(v.data());
    std::vector<HostValue> want = InterpretGraph(g, in_ptrs);
    CxxToolchain tc = CxxToolchain::Current();
    Program p = BuildProgram(std::move(g), "cpu", tc.Identity());
    CacheLookup got = KernelCache::Global().GetOrCompile(
        p.key, p.source, static_cast<int>(p.fusion.kernels.size()), tc, dir_.string());
    EXPECT_TRUE(got.module) << got.status.message() << "\n" << p.source;
    if (!got.module) return p;
    std::map<int, std::vector<float>> buffers;
    auto address = [&](int v) -> float* {
      const Node& n = p.graph.node(v);
      if (n.is_input()) return const_cast<float*>(in_ptrs[n.input_index]);
      auto& b = buffers[v];
      if (b.empty()) b.assign(std::max<int64_t>(n.type.numel(), 1), NAN);
      return b.data();
    };
    RunSteps(p, *got.module, address, [](int) { FAIL() << "no extern ops expected"; });
    EXPECT_EQ(want.size(), p.graph.outputs().size());
    for (size_t o = 0; o < want.size(); ++o) {
      const float* out = address(p.graph.outputs()[o]);
      for (size_t i = 0; i < want[o].data.size(); ++i) {
        double w = want[o].data[i];
        if (std::fabs(out[i] - w) > tol * (1 + std::fabs(w))) {
          ADD_FAILURE() << "output " << o << " element " << i << ": got " << out[i] << " want " << w
                        << "\n"
                        << p.graph.ToString() << p.source;
          return p;
        }
      }
    }
    return p;
  }

  static std::vector<float> Random(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
  }

  std::filesystem::path dir_;
};

TEST_F(CodegenTest, RmsNormOneKernelMatchesReference) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({6, 40}));
  int w = g.AddInput(TensorType::Contiguous({40}));
  int sq = g.AddOp(OpId::kMul, {V(x), V(x)});
  int ms = g.AddOp(OpId::kMean, {V(sq)}, {.dims = {-1}, .keepdim = true});
  int r = g.AddOp(OpId::kRsqrt, {V(g.AddOp(OpId::kAdd, {V(ms), S(1e-6)}))});
  g.SetOutputs({g.AddOp(OpId::kMul, {V(g.AddOp(OpId::kMul, {V(x), V(r)})), V(w)})});
  Program p = CompileAndCheck(std::move(g), {Random(240, 1), Random(40, 2)});
  EXPECT_EQ(p.fusion.kernels.size(), 1u);
  EXPECT_NE(p.source.find("accv[j] += v2;"), std::string::npos) << p.source;  // multi-lane sum
}

TEST_F(CodegenTest, SoftmaxLayerNormAndGatedSilu) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({5, 33}));
  int b = g.AddInput(TensorType::Contiguous({5, 33}));
  int gamma = g.AddInput(TensorType::Contiguous({33}));
  // softmax(x, -1)
  int m = g.AddOp(OpId::kAmax, {V(x)}, {.dims = {-1}, .keepdim = true});
  int e = g.AddOp(OpId::kExp, {V(g.AddOp(OpId::kSub, {V(x), V(m)}))});
  int sm =
      g.AddOp(OpId::kDiv, {V(e), V(g.AddOp(OpId::kSum, {V(e)}, {.dims = {-1}, .keepdim = true}))});
  // layer_norm(x) * gamma + 0.5
  int mu = g.AddOp(OpId::kMean, {V(x)}, {.dims = {-1}, .keepdim = true});
  int xc = g.AddOp(OpId::kSub, {V(x), V(mu)});
  int var = g.AddOp(OpId::kMean, {V(g.AddOp(OpId::kMul, {V(xc), V(xc)}))},
                    {.dims = {-1}, .keepdim = true});
  int rs = g.AddOp(OpId::kRsqrt, {V(g.AddOp(OpId::kAdd, {V(var), S(1e-5)}))});
  int ln =
      g.AddOp(OpId::kAdd,
              {V(g.AddOp(OpId::kMul, {V(g.AddOp(OpId::kMul, {V(xc), V(rs)})), V(gamma)})), S(0.5)});
  // silu(x) * b
  int gate = g.AddOp(OpId::kMul, {V(g.AddOp(OpId::kSilu, {V(x)})), V(b)});
  g.SetOutputs({sm, ln, gate});
  Program p = CompileAndCheck(std::move(g), {Random(165, 3), Random(165, 4), Random(33, 5)});
  EXPECT_EQ(p.fusion.kernels.size(), 1u) << p.fusion.ToString(p.graph);
}

TEST_F(CodegenTest, NonContiguousBroadcastKeepdimFalseAndOtherDims) {
  Graph g;
  // x is a transposed view: sizes [8, 6], strides [1, 8] (storage of a [6, 8] tensor).
  TensorType xt;
  xt.sizes = {8, 6};
  xt.strides = {1, 8};
  int x = g.AddInput(xt);
  int col = g.AddInput(TensorType::Contiguous({8, 1}));
  int y = g.AddOp(OpId::kAdd, {V(x), V(col)}, {.alpha = -0.5});
  int s0 = g.AddOp(OpId::kSum, {V(y)}, {.dims = {0}, .keepdim = false});  // over a non-last dim
  int mx = g.AddOp(OpId::kAmax, {V(y)}, {.dims = {1}, .keepdim = false});
  int all = g.AddOp(OpId::kMean, {V(g.AddOp(OpId::kExp, {V(y)}))});  // every dim -> scalar
  int p2 = g.AddOp(OpId::kPow, {V(y), S(2.0)});
  g.SetOutputs({s0, mx, all, p2});
  Program p = CompileAndCheck(std::move(g), {Random(48, 6), Random(8, 7)});
  EXPECT_GE(p.fusion.kernels.size(), 2u);
}

// Random pointwise/reduction graphs: random shapes (with broadcasting), ops, keepdim; several
// per translation unit so the test compiles few objects.
TEST_F(CodegenTest, RandomGraphsMatchReference) {
  const OpId kUnary[] = {OpId::kExp,  OpId::kNeg,     OpId::kSilu, OpId::kGelu,
                         OpId::kRelu, OpId::kSigmoid, OpId::kAbs,  OpId::kTanh};
  const OpId kBinary[] = {OpId::kAdd, OpId::kSub, OpId::kMul, OpId::kMaximum, OpId::kMinimum};
  const OpId kReduce[] = {OpId::kSum, OpId::kMean, OpId::kAmax, OpId::kAmin};
  for (int trial = 0; trial < 4; ++trial) {
    std::mt19937 rng(100 + trial);
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    int64_t rows = 1 + pick(9), cols = 1 + pick(70);
    Graph g;
    std::vector<int> pool;
    std::vector<std::vector<float>> inputs;
    std::vector<std::vector<int64_t>> in_shapes = {{rows, cols}, {cols}, {rows, 1}, {1, cols}};
    for (int i = 0; i < 3; ++i) {
      auto shape = in_shapes[pick(4)];
      if (i == 0) shape = {rows, cols};
      pool.push_back(g.AddInput(TensorType::Contiguous(shape)));
      int64_t n = 1;
      for (auto s : shape) n *= s;
      inputs.push_back(Random(n, 1000 * trial + i, -1.5f, 1.5f));
    }
    std::vector<int> outs;
    for (int step = 0; step < 12; ++step) {
      int a = pool[pick(static_cast<int>(pool.size()))];
      int kind = pick(6);
      int made;
      if (kind < 2) {
        made = g.AddOp(kUnary[pick(8)], {V(a)});
      } else if (kind < 4) {
        int b = pool[pick(static_cast<int>(pool.size()))];
        const auto& sa = g.node(a).type.sizes;
        const auto& sb = g.node(b).type.sizes;
        try {
          BroadcastShapes(sa, sb);
        } catch (const GraphError&) {
          b = a;
        }
        made = pick(3) == 0 ? g.AddOp(kBinary[pick(5)], {V(a), S(0.25 * pick(5))})
                            : g.AddOp(kBinary[pick(5)], {V(a), V(b)});
      } else {
        int rank = g.node(a).type.rank();
        if (rank == 0) continue;
        bool keep = pick(3) != 0;
        int64_t dim = pick(rank) - (pick(2) ? rank : 0);
        made = g.AddOp(kReduce[pick(4)], {V(a)}, {.dims = {dim}, .keepdim = keep});
        if (!keep) outs.push_back(made);
      }
      pool.push_back(made);
    }
    outs.push_back(pool.back());
    outs.push_back(pool[pool.size() / 2]);
    g.SetOutputs(outs);
    SCOPED_TRACE("trial " + std::to_string(trial) + "\n" + g.ToString());
    CompileAndCheck(std::move(g), inputs, 2e-4);
  }
}

TEST_F(CodegenTest, DiskCacheIsReusedAfterMemoryIsCleared) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({3, 3}));
  g.SetOutputs({g.AddOp(OpId::kExp, {V(x)})});
  CxxToolchain tc = CxxToolchain::Current();
  Program p = BuildProgram(g, "cpu", tc.Identity());
  auto first = KernelCache::Global().GetOrCompile(p.key, p.source, 1, tc, dir_.string());
  ASSERT_TRUE(first.module) << first.status.message();
  EXPECT_EQ(first.source, CacheSource::kCompiled);
  auto second = KernelCache::Global().GetOrCompile(p.key, p.source, 1, tc, dir_.string());
  EXPECT_EQ(second.source, CacheSource::kMemory);
  first = {};
  second = {};
  KernelCache::Global().ClearMemory();
  auto third = KernelCache::Global().GetOrCompile(p.key, p.source, 1, tc, dir_.string());
  ASSERT_TRUE(third.module) << third.status.message();
  EXPECT_EQ(third.source, CacheSource::kDisk);
  EXPECT_TRUE(std::filesystem::exists(dir_ / (p.key + ".cc")));
  // Another shape is another key.
  Graph g2;
  g2.SetOutputs({g2.AddOp(OpId::kExp, {V(g2.AddInput(TensorType::Contiguous({3, 4})))})});
  EXPECT_NE(BuildProgram(g2, "cpu", tc.Identity()).key, p.key);
  EXPECT_NE(BuildProgram(g, "neuron", tc.Identity()).key, p.key);
}

TEST_F(CodegenTest, MissingAndBrokenCompilersGiveClearErrors) {
  Graph g;
  g.SetOutputs({g.AddOp(OpId::kNeg, {V(g.AddInput(TensorType::Contiguous({2})))})});
  CxxToolchain tc = CxxToolchain::Current();
  tc.compiler = "/nonexistent/opscope-no-such-cxx";
  Program p = BuildProgram(g, "cpu", tc.Identity());
  auto r = KernelCache::Global().GetOrCompile(p.key, p.source, 1, tc, dir_.string());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.source, CacheSource::kFailed);
  EXPECT_EQ(r.status.code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status.message().find("could not be run"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find(p.key + ".cc"), std::string::npos) << r.status.message();

  std::string script = (dir_ / "broken-cxx.sh").string();
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho 'generated.cc:1:1: error: this compiler is broken' >&2\nexit 3\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  tc.compiler = script;
  p = BuildProgram(g, "cpu", tc.Identity() + "broken");
  r = KernelCache::Global().GetOrCompile(p.key, p.source, 1, tc, dir_.string());
  EXPECT_FALSE(r.module);
  EXPECT_NE(r.status.message().find("failed (exit 3)"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("this compiler is broken"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find(p.key + ".cc"), std::string::npos) << r.status.message();
}

}  // namespace
}  // namespace opscope::compiler
