// The generated Kineto-shaped trace (generated_trace.h).
#include "bench/generated_trace.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

namespace opscope::bench {

uint64_t GenerateKinetoTrace(const std::string& path, uint64_t target_bytes) {
  static const char* kOps[] = {"aten::linear",     "aten::addmm", "aten::mul",     "aten::add",
                               "aten::layer_norm", "aten::gelu",  "aten::softmax", "aten::copy_",
                               "aten::matmul",     "aten::bmm",   "aten::silu",    "aten::cat"};
  std::vector<std::string> kernels;
  for (int i = 0; i < 200; ++i) {
    kernels.push_back(fmt::format(
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
        "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> "
        ">(int, variant_{})",
        i));
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::string buf;
  buf.reserve(8 << 20);
  buf +=
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n"
      "  \"traceEvents\": [\n";
  uint64_t written = 0;
  int64_t ts_ns = 1000000;
  int64_t ext = 1, corr = 100000, idx = 0;
  bool first = true;
  auto us = [](int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, ns % 1000); };
  while (written + buf.size() < target_bytes) {
    const char* op = kOps[idx % 12];
    const char* child = kOps[(idx + 5) % 12];
    const std::string& kernel = kernels[idx % kernels.size()];
    const int64_t op_ts = ts_ns, op_dur = 40000 + (idx % 997) * 13;
    const int64_t child_ts = op_ts + 2000, child_dur = op_dur - 6000;
    const int64_t rt_ts = child_ts + 3000, rt_dur = 4500 + idx % 300;
    const int64_t k_ts = rt_ts + 20000, k_dur = 15000 + (idx * 7919) % 30000;
    if (!first) buf += ",\n";
    first = false;
    fmt::format_to(std::back_inserter(buf),
                   "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{}\", \"pid\": 4242, "
                   "\"tid\": 4242, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": {}, "
                   "\"Record function id\": 0, \"Sequence number\": {}, \"Input Dims\": [[16, "
                   "1024], [1024, 1024], [1024]], \"Input type\": [\"float\", \"float\", "
                   "\"float\"], \"Ev Idx\": {}}}}},\n",
                   op, us(op_ts), us(op_dur), ext, idx, idx * 4);
    fmt::format_to(std::back_inserter(buf),
                   "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{}\", \"pid\": 4242, "
                   "\"tid\": 4242, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": {}, "
                   "\"Record function id\": 0, \"Input Dims\": [[16, 1024], [1024]], \"Ev Idx\": "
                   "{}}}}},\n",
                   child, us(child_ts), us(child_dur), ext + 1, idx * 4 + 1);
    fmt::format_to(std::back_inserter(buf),
                   "  {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                   "\"pid\": 4242, \"tid\": 4242, \"ts\": {}, \"dur\": {}, \"args\": {{\"External "
                   "id\": {}, \"cbid\": 211, \"correlation\": {}}}}},\n",
                   us(rt_ts), us(rt_dur), ext + 1, corr);
    fmt::format_to(std::back_inserter(buf),
                   "  {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": "
                   "7, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": {}, \"queued\": 0, "
                   "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": {}, "
                   "\"registers per thread\": 32, \"shared memory\": 0, \"grid\": [4096, 1, 1], "
                   "\"block\": [128, 1, 1]}}}},\n",
                   kernel, us(k_ts), us(k_dur), ext + 1, corr);
    fmt::format_to(std::back_inserter(buf),
                   "  {{\"ph\": \"s\", \"id\": {}, \"pid\": 4242, \"tid\": 4242, \"ts\": {}, "
                   "\"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n"
                   "  {{\"ph\": \"f\", \"id\": {}, \"pid\": 0, \"tid\": 7, \"ts\": {}, \"cat\": "
                   "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}}",
                   corr, us(rt_ts), corr, us(k_ts));
    ts_ns += op_dur + 1000;
    ext += 2;
    ++corr;
    ++idx;
    if (buf.size() > (4 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      written += buf.size();
      buf.clear();
    }
  }
  buf +=
      "\n  ],\n  \"traceName\": \"generated\",\n  \"displayTimeUnit\": \"ms\",\n"
      "  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";
  std::fwrite(buf.data(), 1, buf.size(), f);
  written += buf.size();
  std::fclose(f);
  return written;
}

}  // namespace opscope::bench
