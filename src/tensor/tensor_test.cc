// Unit tests of the tensor runtime: devices, views, broadcasting, PyTorch-style errors,
// allocation limits, interception, RunOp, and the host ops the dispatcher records.
#include "opscope/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "opscope/device.h"
#include "opscope/profiler.h"

namespace opscope {
namespace {

using ::testing::HasSubstr;

class TensorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RegisterCpuBackend(); }
};

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const TensorError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(TensorTest, DevicesParseAndPrintLikeTorch) {
  EXPECT_EQ(Device("cpu"), Device(DeviceType::kCPU));
  EXPECT_EQ(Device("neuron:1"), Device(DeviceType::kPrivateUse1, 1));
  EXPECT_EQ(Device("privateuseone:0"), Device(DeviceType::kPrivateUse1, 0));
  EXPECT_EQ(Device("neuron").str(), "neuron:0");
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_THAT(ErrorOf([] { Device("cuda:0"); }), HasSubstr("Expected one of cpu, neuron"));
  EXPECT_THAT(ErrorOf([] { Device("neuron:x"); }), HasSubstr("Invalid device string"));
}

TEST_F(TensorTest, FactoriesAndValues) {
  Tensor t = arange(0, 6).view({2, 3});
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.ToVector(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(t.ToString(), "tensor([[0.0000, 1.0000, 2.0000], [3.0000, 4.0000, 5.0000]])");
  EXPECT_FLOAT_EQ(full({}, 2.5).item(), 2.5f);
  EXPECT_THAT(ErrorOf([&] { t.item(); }),
              HasSubstr("a Tensor with 6 elements cannot be converted"));
  // randn is deterministic per seed and roughly standard normal.
  const std::vector<float> r = randn({10000}, 3).ToVector();
  EXPECT_EQ(r, randn({10000}, 3).ToVector());
  EXPECT_NE(r, randn({10000}, 4).ToVector());
  EXPECT_NEAR(mean(randn({10000}, 3)).item(), 0.0f, 0.05f);
  EXPECT_NEAR(mean(pow(randn({10000}, 3), 2.0)).item(), 1.0f, 0.05f);
}

TEST_F(TensorTest, ViewsShareStorageAndHaveTorchStrides) {
  Tensor t = arange(0, 24).view({2, 3, 4});
  Tensor tt = t.transpose(0, 2);
  EXPECT_EQ(tt.sizes(), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(tt.strides(), (std::vector<int64_t>{1, 4, 12}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.storage(), t.storage());
  Tensor s = t.slice(2, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(s.sizes(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(s.ToVector()[0], 1.0f);
  EXPECT_EQ(s.ToVector()[1], 3.0f);
  EXPECT_EQ(t.narrow(1, 1, 2).ToVector()[0], 4.0f);
  Tensor p = t.permute({2, 0, 1});
  EXPECT_EQ(p.sizes(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(p.strides(), (std::vector<int64_t>{1, 12, 4}));
  Tensor e = arange(0, 3).view({3, 1}).expand({3, 4});
  EXPECT_EQ(e.strides(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(e.ToVector()[5], 1.0f);
  EXPECT_EQ(t.unsqueeze(1).sizes(), (std::vector<int64_t>{2, 1, 3, 4}));
  // view of a transposed tensor fails like PyTorch; reshape copies instead.
  EXPECT_THAT(ErrorOf([&] { tt.view({-1}); }), HasSubstr("Use .reshape(...) instead."));
  Tensor flat = tt.reshape({-1});
  EXPECT_TRUE(flat.is_contiguous());
  EXPECT_NE(flat.storage(), t.storage());
  EXPECT_EQ(flat.ToVector()[1], 12.0f);
  EXPECT_EQ(t.reshape({6, 4}).storage(), t.storage());  // viewable: no copy
  EXPECT_THAT(ErrorOf([&] {
                t.view({5, -1});
              }),
              HasSubstr("shape '[5, -1]' is invalid for input of size 24"));
  EXPECT_THAT(ErrorOf([&] { t.transpose(0, 3); }),
              HasSubstr("Dimension out of range (expected to be in range of [-3, 2], but got 3)"));
  EXPECT_THAT(ErrorOf([&] {
                arange(0, 3).expand({2, 4});
              }),
              HasSubstr("The expanded size of the tensor (4) must match the existing size (3)"));
}

TEST_F(TensorTest, BroadcastingAndItsErrors) {
  Tensor a = ones({3, 1, 5});
  Tensor b = arange(0, 4).view({4, 1});
  Tensor c = a + b;
  EXPECT_EQ(c.sizes(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(c.ToVector()[5], 2.0f);
  EXPECT_THAT(ErrorOf([] {
                ones({2, 3}) + ones({2, 4});
              }),
              HasSubstr("The size of tensor a (3) must match the size of tensor b (4) at "
                        "non-singleton dimension 1"));
  EXPECT_THAT(ErrorOf([] {
                mm(ones({2, 3}), ones({4, 5}));
              }),
              HasSubstr("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
  EXPECT_THAT(ErrorOf([] {
                rms_norm(ones({2, 3}), {4});
              }),
              HasSubstr("Given normalized_shape=[4], expected input with shape [*, 4], but got "
                        "input of size[2, 3]"));
  EXPECT_THAT(ErrorOf([] {
                rms_norm(ones({2, 4}), {4}, ones({3}));
              }),
              HasSubstr("Expected weight to be of same shape as normalized_shape"));
  EXPECT_THAT(ErrorOf([] {
                sum(ones({2, 3}), {1, -1});
              }),
              HasSubstr("dim 1 appears multiple times in the list of dims"));
}

TEST_F(TensorTest, MixedDevicesAndDtypesFailLikeTorch) {
  Tensor cpu = ones({2});
  Tensor meta = empty({2}, Device("meta"));
  EXPECT_THAT(ErrorOf([&] { cpu* meta; }),
              HasSubstr("Expected all tensors to be on the same device, but found at least two "
                        "devices, cpu and meta!"));
  Tensor bf = cpu.to(DType::kBFloat16);
  EXPECT_EQ(bf.dtype(), DType::kBFloat16);
  EXPECT_THAT(ErrorOf([&] { exp(bf); }),
              HasSubstr("expected scalar type Float but found BFloat16"));
  EXPECT_THAT(ErrorOf([&] { meta.data<float>(); }), HasSubstr("needs a cpu tensor"));
  EXPECT_THAT(ErrorOf([&] { ones({2}, Device("neuron:7")); }), HasSubstr("neuron"));
}

TEST_F(TensorTest, MetaTensorsInferShapesWithoutData) {
  Tensor x = empty({4, 8}, Device("meta"));
  Tensor w = empty({8}, Device("meta"));
  Tensor y = matmul(rms_norm(x, {8}, w).t(), x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(y.device(), Device("meta"));
  EXPECT_EQ(y.storage()->data(), nullptr);
  EXPECT_THAT(ErrorOf([&] { sum(y).item(); }), HasSubstr("meta tensors"));
  EXPECT_THAT(ErrorOf([&] { y.to(Device("cpu")); }), HasSubstr("Cannot copy out of meta tensor"));
  EXPECT_EQ(ones({2, 3}).to(Device("meta")).sizes(), (std::vector<int64_t>{2, 3}));
}

TEST_F(TensorTest, OutOfMemoryNamesTheRequestAndWhatIsFree) {
  DeviceBackend& cpu = GetBackend(DeviceType::kCPU);
  const MemoryStats before = cpu.memory_stats(0);
  Tensor keep = ones({1024});  // 4 KiB held while the limit applies
  cpu.set_memory_capacity(0, before.allocated_bytes + 64 * 1024);
  std::string message;
  try {
    empty({1 << 20});
  } catch (const OutOfMemoryError& e) {
    message = e.what();
  }
  cpu.set_memory_capacity(0, before.capacity_bytes);
  EXPECT_THAT(message, HasSubstr("cpu out of memory: tried to allocate 4.00 MiB"));
  EXPECT_THAT(message, HasSubstr("already allocated"));
  EXPECT_THAT(message, HasSubstr("free)"));
  EXPECT_EQ(keep.ToVector()[0], 1.0f);  // what was allocated is intact
  EXPECT_EQ(empty({1 << 20}).numel(), 1 << 20);
}

// Sizes whose element or byte count does not fit int64 are refused before any allocation, never
// wrapped around to a small (or zero) size.
TEST_F(TensorTest, SizesThatOverflowAreRefused) {
  const int64_t big = int64_t{1} << 32;
  EXPECT_THAT(ErrorOf([&] {
                empty({big, big});
              }),
              HasSubstr("the number of elements of shape [4294967296, 4294967296] overflows"));
  EXPECT_THAT(ErrorOf([&] { randn({big, big}, 0); }), HasSubstr("overflows int64"));
  EXPECT_THAT(ErrorOf([&] {
                empty({int64_t{1} << 62, 4});
              }),
              HasSubstr("the number of elements of shape"));
  // 2^61 elements fit int64, their 4-byte size does not.
  EXPECT_THAT(ErrorOf([&] { empty({int64_t{1} << 61}); }),
              HasSubstr("the size in bytes of shape [2305843009213693952] overflows"));
  EXPECT_THAT(ErrorOf([&] { empty({2, int64_t{1} << 62, 2}); }), HasSubstr("overflows int64"));
  EXPECT_THAT(ErrorOf([&] { arange(0, 4).view({big, big, -1}); }), HasSubstr("overflows int64"));
  // A zero dim makes an empty tensor whatever the other sizes are.
  EXPECT_EQ(empty({0, big}).numel(), 0);
  EXPECT_EQ(empty({big, 0}).numel(), 0);
}

TEST_F(TensorTest, CapacityAllocatorCachesBlocksAndReleasesThemUnderPressure) {
  CapacityAllocator alloc(Device("neuron:0"), 4 << 20);
  alloc.set_cache_limit(2 << 20);
  void* a = alloc.Allocate(1 << 20);
  alloc.Free(a, 1 << 20);
  EXPECT_EQ(alloc.stats().allocated_bytes, 0u);
  EXPECT_EQ(alloc.stats().cached_bytes, size_t{1} << 20);
  void* b = alloc.Allocate(1 << 20);  // same size: the cached block comes back
  EXPECT_EQ(a, b);
  EXPECT_EQ(alloc.stats().cached_bytes, 0u);
  alloc.Free(b, 1 << 20);
  // 4 MiB does not fit next to the 1 MiB cached block: the cache is released, then it fits.
  void* c = alloc.Allocate(4 << 20);
  EXPECT_EQ(alloc.stats().cached_bytes, 0u);
  EXPECT_EQ(alloc.stats().allocated_bytes, size_t{4} << 20);
  EXPECT_EQ(alloc.stats().peak_bytes, size_t{4} << 20);
  try {
    alloc.Allocate(100);
    ADD_FAILURE() << "expected out of memory";
  } catch (const OutOfMemoryError& e) {
    EXPECT_STREQ(e.what(),
                 "neuron:0 out of memory: tried to allocate 100 bytes (capacity 4.00 MiB, 4.00 MiB "
                 "already allocated, 0 bytes free)");
  }
  alloc.Free(c, 4 << 20);
}

TEST_F(TensorTest, OpsRunConcurrentlyFromSeveralThreads) {
  const Tensor w = randn({256}, 1);
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Tensor x = randn({64, 256}, 7);
      Tensor y;
      for (int i = 0; i < 50; ++i) y = rms_norm(x, {256}, w, 1e-6) + 0.0 * i;
      results[t] = y.ToVector();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(results[t], results[0]);
}

// Records every top-level op; replaces aten::mul by a meta tensor of the right shape.
class RecordingInterceptor : public DispatchInterceptor {
 public:
  std::optional<std::vector<Tensor>> Intercept(const OpRequest& r) override {
    seen.emplace_back(r.name());
    if (r.op == OpId::kMul && replace_mul) {
      const auto shape = BroadcastShapes(r.inputs[0].sizes(), r.inputs[1].sizes());
      return std::vector<Tensor>{empty(shape, Device("meta"))};  // runs normally: suspended
    }
    return std::nullopt;
  }
  std::vector<std::string> seen;
  bool replace_mul = false;
};

TEST_F(TensorTest, InterceptorSeesTopLevelOpsAndMayReplaceThem) {
  Tensor x = ones({2, 4});
  Tensor w = ones({4});
  RecordingInterceptor rec;
  {
    InterceptGuard guard(&rec);
    Tensor y = rms_norm(x, {4}, w, 1e-6);
    EXPECT_NEAR(y.ToVector()[0], 1.0f, 1e-5);  // ran normally
    rec.replace_mul = true;
    Tensor m = x * w;
    EXPECT_EQ(m.device(), Device("meta"));
    EXPECT_EQ(m.sizes(), (std::vector<int64_t>{2, 4}));
  }
  // rms_norm's inner _fused_rms_norm is not top-level; empty() called inside Intercept is not
  // offered to the interceptor that is running.
  EXPECT_EQ(rec.seen, (std::vector<std::string>{"aten::rms_norm", "aten::mul"}));
  Tensor after = x * w;  // guard gone: nothing intercepted
  EXPECT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(after.device(), Device("cpu"));
}

TEST_F(TensorTest, RunOpByName) {
  Tensor x = arange(1, 5);
  OpAttrs a;
  a.scalar = 2;
  a.has_scalar = true;
  std::vector<Tensor> out = RunOp("aten::mul", std::span<const Tensor>(&x, 1), a);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ToVector(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_THAT(ErrorOf([&] { RunOp("aten::frobnicate", {}, OpAttrs{}); }),
              HasSubstr("unknown op 'aten::frobnicate'"));
  const auto ops = SupportedOps();
  for (const char* name : {"aten::add", "aten::rms_norm", "aten::_fused_rms_norm", "aten::to",
                           "aten::copy_", "aten::empty", "aten::matmul", "aten::layer_norm"}) {
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), std::string_view(name))) << name;
  }
}

// Host ops of a profiled region, as (name, depth, input shapes) in time order.
std::vector<std::string> RecordedOps(const Trace& trace) {
  std::vector<std::string> out;
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kCpuOp) continue;
    std::string line = std::string(s.depth, ' ') + std::string(trace.Str(s.name));
    if (s.input_shapes != 0) line += " " + std::string(trace.Str(s.input_shapes));
    out.push_back(line);
  }
  return out;
}

TEST_F(TensorTest, DispatcherRecordsAtenOpsWithNestingAndShapes) {
  Tensor x = ones({2, 4});
  Tensor w = ones({4});
  Profiler prof({.activities = {ProfilerActivity::kCPU}, .record_shapes = true});
  prof.Start();
  Tensor y = rms_norm(x, {4}, w, 1e-6);
  Tensor z = x * 2.0;
  Tensor m = matmul(x, x.t());
  prof.Stop();
  const std::vector<std::string> ops = RecordedOps(prof.trace());
  EXPECT_THAT(ops, ::testing::ElementsAre(
                       "aten::rms_norm [[2, 4], [], [4], []]",
                       " aten::_fused_rms_norm [[2, 4], [], [4], []]", "aten::mul [[2, 4], []]",
                       "aten::t [[2, 4]]", " aten::transpose [[2, 4], [], []]",
                       "aten::matmul [[2, 4], [4, 2]]", " aten::mm [[2, 4], [4, 2]]"))
      << ::testing::PrintToString(ops);
}

}  // namespace
}  // namespace opscope
