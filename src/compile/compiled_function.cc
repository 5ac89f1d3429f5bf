// compile(): guard entries, first-call capture + build, and per-call execution.
#include <cstdio>
#include <map>

#include "compile/capture.h"
#include "compile/kernel_cache.h"
#include "compile/program.h"
#include "compile/runtime.h"
#include "opscope/activity.h"
#include "opscope/compile.h"
#include "opscope/device.h"
#include "opscope/record.h"

namespace opscope {

using compiler::CacheLookup;
using compiler::CacheSource;
using compiler::CxxToolchain;
using compiler::KernelCache;

namespace {

std::atomic<int> g_next_frame_id{0};

struct Guard {
  std::vector<int64_t> sizes, strides;
  DType dtype;
  Device device;
  bool Matches(const Tensor& t) const {
    return t.defined() && t.dtype() == dtype && t.device() == device && t.sizes() == sizes &&
           t.strides() == strides;
  }
};

uint32_t Name(const std::string& s) { return InternName(s); }

}  // namespace

struct CompiledFunction::State {
  CompileFn fn;
  CompileOptions options;
  int frame_id = 0;
  CompileStats stats;
  struct Entry {
    std::vector<Guard> guards;
    compiler::CompiledEntry compiled;
    CompiledGraphInfo info;
    uint32_t region_name = 0;
    bool warned = false;
  };
  std::vector<std::unique_ptr<Entry>> entries;
  const CompiledGraphInfo* last = nullptr;
  CompiledGraphInfo empty_info;

  Entry* Lookup(std::span<const Tensor> inputs) {
    for (auto& e : entries) {
      if (e->guards.size() != inputs.size()) continue;
      bool ok = true;
      for (size_t i = 0; i < inputs.size() && ok; ++i) ok = e->guards[i].Matches(inputs[i]);
      if (ok) return e.get();
    }
    return nullptr;
  }

  Entry* Build(std::span<const Tensor> inputs) {
    static const uint32_t kCompileInner = Name("_compile.compile_inner");
    RecordScope scope(kCompileInner);
    auto entry = std::make_unique<Entry>();
    for (const Tensor& t : inputs) {
      if (!t.defined()) throw TensorError("compile(): an input tensor is undefined");
      entry->guards.push_back({t.sizes(), t.strides(), t.dtype(), t.device()});
    }
    int compile_id = static_cast<int>(entries.size());
    entry->info.region_name =
        "Torch-Compiled Region: " + std::to_string(frame_id) + "/" + std::to_string(compile_id);
    entry->region_name = Name(entry->info.region_name);
    compiler::BuildEntry(fn, inputs, options, &entry->compiled, &entry->info);
    ++stats.compiles;
    if (compile_id > 0) ++stats.recompiles;
    if (entry->info.cache == "memory") ++stats.memory_hits;
    if (entry->info.cache == "disk") ++stats.disk_hits;
    if (entry->info.cache == "compiled") ++stats.cxx_runs;
    entries.push_back(std::move(entry));
    return entries.back().get();
  }
};

CompiledFunction::CompiledFunction(CompileFn fn, CompileOptions options)
    : state_(std::make_shared<State>()) {
  const DeviceBackend* backend = FindBackendByName(options.backend);
  if (backend == nullptr) {
    throw std::invalid_argument("compile(): unknown backend '" + options.backend +
                                "' (registered: " + RegisteredBackendNames() + ")");
  }
  if (!backend->SupportsPrograms() && !backend->RunsHostCode()) {
    throw std::invalid_argument("compile(): the " + options.backend +
                                " backend cannot run compiled code (it runs neither device "
                                "programs nor host code)");
  }
  state_->fn = std::move(fn);
  state_->options = std::move(options);
  state_->frame_id = g_next_frame_id++;
}

std::vector<Tensor> CompiledFunction::operator()(std::span<const Tensor> inputs) {
  State& s = *state_;
  ++s.stats.calls;
  State::Entry* entry;
  {
    static const uint32_t kLookup = Name("TorchDynamo Cache Lookup");
    RecordScope lookup(kLookup);
    entry = s.Lookup(inputs);
  }
  if (!entry) entry = s.Build(inputs);
  s.last = &entry->info;
  RecordScope region(entry->region_name, ActivityKind::kUserAnnotation);
  if (!entry->info.fallback_reason.empty()) {
    if (s.options.warn_on_fallback && !entry->warned) {
      std::fprintf(stderr, "opscope compile: %s; running %s eagerly\n",
                   entry->info.fallback_reason.c_str(), entry->info.region_name.c_str());
      entry->warned = true;
    }
    ++s.stats.eager_calls;
    return s.fn(inputs);
  }
  return compiler::RunEntry(entry->compiled, inputs);
}

const CompileStats& CompiledFunction::stats() const { return state_->stats; }
const CompiledGraphInfo& CompiledFunction::last() const {
  return state_->last ? *state_->last : state_->empty_info;
}
int CompiledFunction::frame_id() const { return state_->frame_id; }
const CompileOptions& CompiledFunction::options() const { return state_->options; }

CompiledFunction compile(CompileFn fn, CompileOptions options) {
  return CompiledFunction(std::move(fn), std::move(options));
}

void ClearCompileMemoryCache() { KernelCache::Global().ClearMemory(); }

}  // namespace opscope
