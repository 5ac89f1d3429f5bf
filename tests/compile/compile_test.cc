// compile() end to end: capture through the dispatcher, fusion, generated code, guards, caches,
// eager fallback, profiler ranges, and the neuron backend — checked against eager execution.
#include "opscope/compile.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "device/neuron/device.h"
#include "opscope/device.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"
#include "opscope/tensor.h"

extern char** environ;

namespace opscope {
namespace {

std::vector<Tensor> NaiveRmsNorm(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor r = rsqrt(mean(x * x, {-1}, true) + 1e-6);
  return {x * r * in[1]};
}

void ExpectClose(const Tensor& got, const Tensor& want, double tol = 1e-4) {
  ASSERT_EQ(got.sizes(), want.sizes());
  std::vector<float> g = got.ToVector(), w = want.ToVector();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
  }
}

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterCpuBackend();
    RegisterNeuronBackend();
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope-compile-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ClearCompileMemoryCache();
  }
  void TearDown() override {
    ::unsetenv("OPSCOPE_CXX");
    ClearCompileMemoryCache();
    std::filesystem::remove_all(dir_);
  }
  CompileOptions Options(std::string backend = "cpu") {
    return {.backend = std::move(backend), .cache_dir = dir_.string(), .warn_on_fallback = false};
  }
  std::filesystem::path dir_;
};

TEST_F(CompileTest, RmsNormIsOneFusedKernelMatchingEager) {
  Tensor x = randn({16, 256}, 1), w = randn({256}, 2);
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  std::vector<Tensor> y = f({x, w});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
  EXPECT_EQ(f.last().kernels, 1) << f.last().fusion;
  EXPECT_EQ(f.last().extern_ops, 0);
  EXPECT_EQ(f.last().captured_ops, 6);  // mul, mean, add, rsqrt, mul, mul
  EXPECT_EQ(f.last().materialized_bytes, 16 * 256 * 4);
  ExpectClose(y[0], NaiveRmsNorm(std::vector<Tensor>{x, w})[0]);
  ExpectClose(y[0], rms_norm(x, {256}, w, 1e-6));
  f({x, w});
  EXPECT_EQ(f.stats().calls, 2);
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().eager_calls, 0);
}

TEST_F(CompileTest, GuardsRecompileOnShapeAndStrides) {
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  Tensor w = randn({32}, 3);
  f({randn({4, 32}, 4), w});
  EXPECT_EQ(f.last().region_name, "Torch-Compiled Region: " + std::to_string(f.frame_id()) + "/0");
  Tensor x8 = randn({8, 32}, 5);
  ExpectClose(f({x8, w})[0], NaiveRmsNorm(std::vector<Tensor>{x8, w})[0]);
  EXPECT_EQ(f.stats().recompiles, 1);
  EXPECT_EQ(f.last().region_name, "Torch-Compiled Region: " + std::to_string(f.frame_id()) + "/1");
  // Same shape, other strides (a transposed view): another entry, still correct.
  Tensor xt = randn({32, 8}, 6).t();
  ExpectClose(f({xt, w})[0], NaiveRmsNorm(std::vector<Tensor>{xt, w})[0]);
  EXPECT_EQ(f.stats().compiles, 3);
  f({x8, w});
  EXPECT_EQ(f.stats().compiles, 3);
}

TEST_F(CompileTest, SoftmaxLayerNormGatedSiluWithViewsAndBroadcasting) {
  auto fn = [](std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor& a = in[0];  // [6, 40], non-contiguous
    const Tensor& b = in[1];  // [6, 40]
    const Tensor& g = in[2];  // [40]
    Tensor sm = softmax(a, -1);
    Tensor ln = layer_norm(a, {40}, g, g * 0.5, 1e-5);
    Tensor gate = silu(a) * b;
    Tensor colmax = amax(a * 2.0 - b, {0}, /*keepdim=*/false);
    Tensor total = sum(exp(a) / (b * b + 1.0));
    return {sm, ln, gate, colmax, total};
  };
  Tensor a = randn({40, 6}, 7).t(), b = randn({6, 40}, 8), g = randn({40}, 9);
  CompiledFunction f = compile(fn, Options());
  std::vector<Tensor> got = f({a, b, g});
  ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
  std::vector<Tensor> want = fn(std::vector<Tensor>{a, b, g});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + "\n" + f.last().fusion);
    ExpectClose(got[i], want[i], 2e-4);
  }
  EXPECT_LE(f.last().kernels, 3) << f.last().fusion;
}

TEST_F(CompileTest, RandomPointwiseReductionGraphsMatchEager) {
  for (int trial = 0; trial < 4; ++trial) {
    std::mt19937 rng(trial + 11);
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    int64_t r = 1 + pick(7), c = 1 + pick(50);
    std::vector<int> ops;
    for (int i = 0; i < 8; ++i) ops.push_back(pick(9));
    bool keep = pick(2);
    auto fn = [ops, keep](std::span<const Tensor> in) -> std::vector<Tensor> {
      Tensor x = in[0], row = in[1], col = in[2];
      std::vector<Tensor> outs;
      for (int op : ops) {
        switch (op) {
          case 0:
            x = x + row;
            break;
          case 1:
            x = x * col - 0.5;
            break;
          case 2:
            x = exp(neg(x * x));
            break;
          case 3:
            x = silu(x) / (col * col + 1.0);
            break;
          case 4:
            x = x - mean(x, {-1}, true);
            break;
          case 5:
            x = x / (amax(x, {-1}, true) + 3.0);
            break;
          case 6:
            outs.push_back(sum(x, {0}, false));
            break;
          case 7:
            x = sub(x, row, 2.0);
            break;
          case 8:
            outs.push_back(mean(x * x, {-1}, false));
            break;
        }
      }
      outs.push_back(x);
      return outs;
    };
    (void)keep;
    Tensor x = randn({r, c}, 100 + trial), row = randn({r, 1}, 200 + trial),
           col = randn({c}, 300 + trial);
    if (trial % 2) x = randn({c, r}, 400 + trial).t();  // non-contiguous
    CompiledFunction f = compile(fn, Options());
    std::vector<Tensor> got = f({x, row, col});
    ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
    std::vector<Tensor> want = fn(std::vector<Tensor>{x, row, col});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " output " + std::to_string(i) + "\n" +
                   f.last().graph + f.last().fusion);
      ExpectClose(got[i], want[i], 5e-4);
    }
  }
}

TEST_F(CompileTest, ExternOpsRunBetweenKernels) {
  Tensor bias = randn({8}, 12);  // closed over: lifted into the graph
  auto fn = [bias](std::span<const Tensor> in) -> std::vector<Tensor> {
    Tensor h = matmul(exp(in[0] * 0.1), in[1]);
    return {softmax(h + bias, -1).reshape({4, 2, 8})};
  };
  Tensor a = randn({8, 16}, 10), b = randn({16, 8}, 11);
  CompiledFunction f = compile(fn, Options());
  Tensor got = f({a, b})[0];
  ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
  EXPECT_GE(f.last().extern_ops, 2) << f.last().fusion;
  EXPECT_EQ(f.last().kernels, 2) << f.last().fusion;
  ExpectClose(got, fn(std::vector<Tensor>{a, b})[0]);
}

TEST_F(CompileTest, FallsBackToEagerWhenTheCompilerIsMissingOrBroken) {
  Tensor x = randn({4, 16}, 13), w = randn({16}, 14);
  Tensor want = NaiveRmsNorm(std::vector<Tensor>{x, w})[0];
  ::setenv("OPSCOPE_CXX", "/nonexistent/opscope-cxx", 1);
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  ExpectClose(f({x, w})[0], want);
  EXPECT_NE(f.last().fallback_reason.find("could not be run"), std::string::npos)
      << f.last().fallback_reason;
  EXPECT_NE(f.last().fallback_reason.find(".cc"), std::string::npos) << f.last().fallback_reason;
  EXPECT_EQ(f.stats().eager_calls, 1);

  std::string script = (dir_ / "broken-cxx.sh").string();
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho 'error: broken on purpose' >&2\nexit 1\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ::setenv("OPSCOPE_CXX", script.c_str(), 1);
  CompiledFunction g = compile(NaiveRmsNorm, Options());
  ExpectClose(g({x, w})[0], want);
  EXPECT_NE(g.last().fallback_reason.find("broken on purpose"), std::string::npos)
      << g.last().fallback_reason;
  EXPECT_TRUE(std::filesystem::exists(g.last().source_path)) << g.last().source_path;
}

TEST_F(CompileTest, CapturesInPlaceOpsAsAClearFallback) {
  auto fn = [](std::span<const Tensor> in) -> std::vector<Tensor> {
    Tensor y = in[0] * 2.0;
    Tensor z = empty(y.sizes());
    z.copy_(y);
    return {z};
  };
  CompiledFunction f = compile(fn, Options());
  Tensor x = randn({3}, 15);
  ExpectClose(f({x})[0], x * 2.0);
  EXPECT_NE(f.last().fallback_reason.find("in-place op aten::copy_"), std::string::npos)
      << f.last().fallback_reason;
}

TEST_F(CompileTest, SecondInstanceReusesTheDiskCache) {
  Tensor x = randn({4, 64}, 16), w = randn({64}, 17);
  {
    CompiledFunction f = compile(NaiveRmsNorm, Options());
    f({x, w});
    EXPECT_EQ(f.last().cache, "compiled");
    EXPECT_EQ(f.stats().cxx_runs, 1);
  }
  {
    CompiledFunction f = compile(NaiveRmsNorm, Options());
    f({x, w});
    EXPECT_EQ(f.last().cache, "memory");
  }
  ClearCompileMemoryCache();  // as a fresh process would start
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  ExpectClose(f({x, w})[0], NaiveRmsNorm(std::vector<Tensor>{x, w})[0]);
  EXPECT_EQ(f.last().cache, "disk");
  EXPECT_EQ(f.stats().disk_hits, 1);
  EXPECT_EQ(f.stats().cxx_runs, 0);
}

// Run by SecondProcessLoadsTheObjectFromDisk in a child process (skipped otherwise).
TEST_F(CompileTest, ChildProcessFindsTheCompiledObjectOnDisk) {
  const char* dir = std::getenv("OPSCOPE_COMPILE_TEST_CHILD_DIR");
  if (!dir) GTEST_SKIP() << "runs only as the child of SecondProcessLoadsTheObjectFromDisk";
  CompiledFunction f = compile(NaiveRmsNorm, {.backend = "cpu", .cache_dir = dir});
  Tensor x = randn({3, 48}, 30), w = randn({48}, 31);
  ExpectClose(f({x, w})[0], NaiveRmsNorm(std::vector<Tensor>{x, w})[0]);
  EXPECT_EQ(f.last().cache, "disk");
  EXPECT_EQ(f.stats().cxx_runs, 0);
}

TEST_F(CompileTest, SecondProcessLoadsTheObjectFromDisk) {
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  f({randn({3, 48}, 30), randn({48}, 31)});
  ASSERT_EQ(f.last().cache, "compiled") << f.last().fallback_reason;
  std::string env = "OPSCOPE_COMPILE_TEST_CHILD_DIR=" + dir_.string();
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(env.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=CompileTest.ChildProcessFindsTheCompiledObjectOnDisk";
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  char* argv[] = {self.data(), filter.data(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child process did not reuse the disk cache";
}

int CountSlices(const Trace& t, std::string_view name) {
  int n = 0;
  for (const Slice& s : t.slices()) n += t.Str(s.name) == name;
  return n;
}

TEST_F(CompileTest, ProfilerShowsCompiledRegionsAndFirstCallWork) {
  Tensor x = randn({8, 32}, 18), w = randn({32}, 19);
  CompiledFunction f = compile(NaiveRmsNorm, Options());
  Profiler prof({.activities = {ProfilerActivity::kCPU}});
  prof.Start();
  f({x, w});
  f({x, w});
  prof.Stop();
  const Trace& t = prof.trace();
  std::string region = "Torch-Compiled Region: " + std::to_string(f.frame_id()) + "/0";
  EXPECT_EQ(CountSlices(t, region), 2);
  EXPECT_EQ(CountSlices(t, "TorchDynamo Cache Lookup"), 2);
  EXPECT_EQ(CountSlices(t, "_compile.compile_inner"), 1);
  EXPECT_EQ(CountSlices(t, "opscope::compile::capture"), 1);
  EXPECT_EQ(CountSlices(t, "opscope::compile::cxx"), 1);
  // The fused kernel runs inside each region; eager aten::mul does not.
  int kernels = 0, muls_in_regions = 0;
  for (const Slice& s : t.slices()) {
    if (t.Str(s.name).starts_with("cpp_fused_")) {
      ++kernels;
      ASSERT_NE(s.parent, kNone);
      EXPECT_EQ(t.Str(t.slices()[s.parent].name), region);
    }
    if (t.Str(s.name) == "aten::mul" && s.parent != kNone &&
        t.Str(t.slices()[s.parent].name) == region)
      ++muls_in_regions;
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(muls_in_regions, 0);
  for (const Slice& s : t.slices()) {
    if (t.Str(s.name) == region) {
      EXPECT_EQ(s.kind, ActivityKind::kUserAnnotation);
    }
  }
}

TEST_F(CompileTest, NeuronBackendIsOneDeviceExecutionPerCall) {
  Device nc("neuron:0");
  Tensor x = randn({256, 512}, 20).to(nc), w = randn({512}, 21).to(nc);
  CompiledFunction f = compile(NaiveRmsNorm, Options("neuron"));
  f({x, w});  // first call: compile, and the program's first execution
  neuron::synchronize();
  ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
  int64_t before = neuron::DefaultDevice().executions();
  Tensor y = f({x, w})[0];
  neuron::synchronize();
  EXPECT_EQ(neuron::DefaultDevice().executions() - before, 1);
  EXPECT_EQ(y.device(), nc);
  ExpectClose(y.to(Device("cpu")), rms_norm(x.to(Device("cpu")), {512}, w.to(Device("cpu")), 1e-6));

  // Backend/device mismatch: clear reason, eager result.
  CompiledFunction g = compile(NaiveRmsNorm, Options("neuron"));
  Tensor xc = randn({2, 8}, 22), wc = randn({8}, 23);
  ExpectClose(g({xc, wc})[0], NaiveRmsNorm(std::vector<Tensor>{xc, wc})[0]);
  EXPECT_NE(g.last().fallback_reason.find("inputs are on cpu"), std::string::npos)
      << g.last().fallback_reason;
  // The device is a guard: neuron inputs make a new entry, which compiles.
  Tensor y2 = g({xc.to(nc), wc.to(nc)})[0];
  EXPECT_EQ(g.stats().recompiles, 1);
  EXPECT_TRUE(g.last().fallback_reason.empty()) << g.last().fallback_reason;
  EXPECT_EQ(y2.device(), nc);
  ExpectClose(y2.to(Device("cpu")), NaiveRmsNorm(std::vector<Tensor>{xc, wc})[0]);
}

TEST_F(CompileTest, NeuronBackendCompilesSoftmaxLayerNormAndGating) {
  auto fn = [](std::span<const Tensor> in) -> std::vector<Tensor> {
    Tensor h = layer_norm(in[0], {64}, in[2], Tensor(), 1e-5);
    return {softmax(h, -1) * silu(in[1]), sum(h, {0}, false)};
  };
  Device nc("neuron:0");
  Tensor a = randn({32, 64}, 26), b = randn({32, 64}, 27), g = randn({64}, 28);
  CompiledFunction f = compile(fn, Options("neuron"));
  int64_t before = neuron::DefaultDevice().executions();
  std::vector<Tensor> got = f({a.to(nc), b.to(nc), g.to(nc)});
  neuron::synchronize();
  ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
  EXPECT_EQ(neuron::DefaultDevice().executions() - before, 1) << f.last().fusion;
  std::vector<Tensor> want = fn(std::vector<Tensor>{a, b, g});
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < got.size(); ++i) ExpectClose(got[i].to(Device("cpu")), want[i], 2e-4);
}

// The backend is found in the registry by name; one that runs device programs gets the whole
// graph as one program, so a graph with an extern op runs eagerly there, saying which op.
TEST_F(CompileTest, BackendsComeFromTheRegistry) {
  try {
    compile(NaiveRmsNorm, Options("tpu"));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'tpu' (registered: cpu, neuron"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(compile(NaiveRmsNorm, Options("meta")), std::invalid_argument);
  auto fn = [](std::span<const Tensor> in) -> std::vector<Tensor> {
    return {mm(in[0], in[1]) * 2.0};
  };
  Device nc("neuron:0");
  Tensor a = randn({8, 8}, 40), b = randn({8, 8}, 41);
  CompiledFunction f = compile(fn, Options("neuron"));
  Tensor got = f({a.to(nc), b.to(nc)})[0];
  EXPECT_NE(f.last().fallback_reason.find(
                "the neuron backend lowers pointwise ops and reductions only; aten::mm cannot be "
                "part of a device program"),
            std::string::npos)
      << f.last().fallback_reason;
  ExpectClose(got.to(Device("cpu")), fn(std::vector<Tensor>{a, b})[0]);
}

// Every pointwise op and reduction of the registry is captured and fused: the activations,
// maximum/minimum, log/abs/reciprocal and amin run as one kernel (cpu) or one device execution
// (neuron), with eager's results.
TEST_F(CompileTest, ActivationsMinMaxAndAminFuseOnBothBackends) {
  auto fn = [](std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor& x = in[0];
    const Tensor& y = in[1];
    Tensor act = relu(x) * sigmoid(y) + tanh(x) - minimum(x, y);
    Tensor h = maximum(act, log(abs(y) + 1.0)) * reciprocal(abs(x) + 2.0);
    return {h - amin(h, {-1}, true)};
  };
  Tensor x = randn({8, 48}, 30), y = randn({8, 48}, 31);
  const std::vector<Tensor> want = fn(std::vector<Tensor>{x, y});
  for (const char* backend : {"cpu", "neuron"}) {
    SCOPED_TRACE(backend);
    const Device device(std::string(backend) == "cpu" ? "cpu" : "neuron:0");
    CompiledFunction f = compile(fn, Options(backend));
    int64_t before = neuron::DefaultDevice().executions();
    std::vector<Tensor> got = f({x.to(device), y.to(device)});
    neuron::synchronize();
    ASSERT_TRUE(f.last().fallback_reason.empty()) << f.last().fallback_reason;
    EXPECT_EQ(f.last().kernels, 1) << f.last().fusion;
    EXPECT_EQ(f.last().extern_ops, 0) << f.last().fusion;
    if (device.type == DeviceType::kPrivateUse1) {
      EXPECT_EQ(neuron::DefaultDevice().executions() - before, 1);
    }
    ASSERT_EQ(got.size(), 1u);
    ExpectClose(got[0].to(Device("cpu")), want[0]);
  }
}

TEST_F(CompileTest, NeuronExecutionIsLinkedToTheRegionInTheTrace) {
  Device nc("neuron:0");
  Tensor x = randn({128, 256}, 24).to(nc), w = randn({256}, 25).to(nc);
  CompiledFunction f = compile(NaiveRmsNorm, Options("neuron"));
  f({x, w});
  neuron::synchronize();
  Profiler prof({.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1}});
  prof.Start();
  f({x, w});
  neuron::synchronize();
  prof.Stop();
  const Trace& t = prof.trace();
  std::string region = "Torch-Compiled Region: " + std::to_string(f.frame_id()) + "/0";
  int execs = 0, runtime_calls = 0;
  for (uint32_t i = 0; i < t.slices().size(); ++i) {
    const Slice& s = t.slices()[i];
    if (t.Str(s.name) == "nrta_execute_schedule") ++runtime_calls;
    if (t.Str(s.name) != "nc_exec_running") continue;
    ++execs;
    uint32_t op = t.Link(i).op;
    ASSERT_NE(op, kNone);
    EXPECT_EQ(t.Str(t.slices()[op].name), region);
  }
  EXPECT_EQ(execs, 1);
  EXPECT_EQ(runtime_calls, 1);
}

}  // namespace
}  // namespace opscope
