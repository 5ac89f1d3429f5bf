// One guard entry of a compiled function (runtime.h): built once, run on the named backend.
#include "compile/runtime.h"

#include <set>

#include "opscope/activity.h"
#include "opscope/device.h"
#include "opscope/record.h"

namespace opscope::compiler {
namespace {

// "cpp_fused_add_mean_mul_rsqrt_0", as TorchInductor names its C++ kernels.
std::string KernelProfileName(const Graph& g, const FusedKernel& k, int index) {
  std::set<std::string> ops;
  for (int n : k.nodes) {
    const std::string op = g.node(n).name();
    ops.insert(op.substr(op.find("::") == std::string::npos ? 0 : op.find("::") + 2));
  }
  std::string s = "cpp_fused";
  for (const auto& o : ops) s += "_" + o;
  return s + "_" + std::to_string(index);
}

// The tensors of one call: every materialized value by node.
struct CallValues {
  std::vector<Tensor> values;

  float* Address(int v) const { return MakeTensorRef(values[v]).f32(); }
};

CallValues Materialize(const CompiledEntry& e, std::span<const Tensor> inputs) {
  const Program& p = *e.program;
  const auto& nodes = p.graph.nodes();
  CallValues cv;
  cv.values.resize(nodes.size());
  std::vector<std::shared_ptr<Storage>> slots;
  for (int64_t bytes : p.memory.slot_bytes)
    slots.push_back(std::make_shared<Storage>(e.device, static_cast<size_t>(bytes)));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const auto& st = p.memory.values[i];
    switch (st.storage) {
      case MemoryPlan::kInput:
        cv.values[i] = n.input_index < static_cast<int>(inputs.size())
                           ? inputs[n.input_index]
                           : e.lifted.at(n.input_index - inputs.size());
        break;
      case MemoryPlan::kOutput:
        cv.values[i] = empty(n.type.sizes, e.device);
        break;
      case MemoryPlan::kSlot:
        cv.values[i] = Tensor(slots[st.slot], n.type.sizes, ContiguousStrides(n.type.sizes), 0,
                              DType::kFloat32);
        break;
      case MemoryPlan::kConstant:
        cv.values[i] = full(n.type.sizes, n.constant, e.device);
        break;
      default:
        break;
    }
  }
  return cv;
}

void RunExtern(const CompiledEntry& e, CallValues& cv, int node) {
  const Node& n = e.program->graph.node(node);
  const ExternCall& call = e.externs.at(n.extern_id);
  std::vector<Tensor> ins;
  size_t next = 0;
  for (bool d : call.defined) ins.push_back(d ? cv.values[n.operands.at(next++).value] : Tensor());
  std::vector<Tensor> outs = RunOp(n.op, ins, call.attrs);
  if (outs.size() != 1 || outs[0].sizes() != n.type.sizes || outs[0].strides() != n.type.strides) {
    throw TensorError(std::string("compile(): ") + n.name() +
                      " produced a different layout than when captured");
  }
  cv.values[node] = std::move(outs[0]);
}

// The values a device program's call passes, in order: inputs (graph inputs, constants) and
// outputs (graph outputs, slots of intermediates that cross kernels).
void ProgramCallLayout(const Program& p, std::vector<int>* ins, std::vector<int>* outs) {
  for (size_t v = 0; v < p.memory.values.size(); ++v) {
    switch (p.memory.values[v].storage) {
      case MemoryPlan::kInput:
      case MemoryPlan::kConstant:
        ins->push_back(static_cast<int>(v));
        break;
      case MemoryPlan::kOutput:
      case MemoryPlan::kSlot:
        outs->push_back(static_cast<int>(v));
        break;
      case MemoryPlan::kNone:
      case MemoryPlan::kExtern:
        break;
    }
  }
}

// What a device program computes with: the generated C++ kernels, run on the call's tensors
// (laid out by ProgramCallLayout) wherever the backend runs them. Owns what it touches.
ProgramKernel GeneratedKernels(std::shared_ptr<const Program> program,
                               std::shared_ptr<const CompiledModule> module, std::vector<int> ins,
                               std::vector<int> outs) {
  return [program, module, ins, outs](std::span<const TensorRef> in_refs,
                                      std::span<const TensorRef> out_refs) {
    if (!module) return;  // no kernels: the graph only passes values through
    std::vector<float*> address(program->graph.nodes().size(), nullptr);
    for (size_t i = 0; i < ins.size() && i < in_refs.size(); ++i)
      address[ins[i]] = in_refs[i].f32();
    for (size_t i = 0; i < outs.size() && i < out_refs.size(); ++i) {
      address[outs[i]] = out_refs[i].f32();
    }
    RunSteps(
        *program, *module, [&](int v) { return address[v]; },
        [](int node) {
          throw GraphError("extern op %" + std::to_string(node) + " inside a device program");
        });
  };
}

std::vector<Tensor> Outputs(const CompiledEntry& e, const CallValues& cv) {
  std::vector<Tensor> outs;
  for (int o : e.program->graph.outputs()) outs.push_back(cv.values[o]);
  return outs;
}

}  // namespace

void BuildEntry(const CompileFn& fn, std::span<const Tensor> inputs, const CompileOptions& options,
                CompiledEntry* entry, CompiledGraphInfo* info) {
  static const uint32_t kCapture = InternName("opscope::compile::capture");
  static const uint32_t kPasses = InternName("opscope::compile::passes");
  static const uint32_t kCodegen = InternName("opscope::compile::codegen");
  static const uint32_t kCxx = InternName("opscope::compile::cxx");
  DeviceBackend* backend = FindBackendByName(options.backend);
  entry->backend = backend;
  entry->device = inputs.empty() ? Device() : inputs[0].device();
  try {
    if (backend == nullptr) {
      throw GraphError("no backend named \"" + options.backend +
                       "\" is registered (registered: " + RegisteredBackendNames() + ")");
    }
    CapturedGraph cap;
    {
      RecordScope scope(kCapture);
      cap = CaptureGraph(fn, inputs);
    }
    info->captured_ops = cap.captured_ops;
    for (const Tensor& t : inputs) {
      if (t.device() != entry->device) {
        throw GraphError("the inputs are on different devices (" + entry->device.str() + " and " +
                         t.device().str() + ")");
      }
    }
    const DeviceType want = backend->type();
    if (!inputs.empty() && entry->device.type != want) {
      throw GraphError("backend \"" + options.backend + "\" runs " +
                       std::string(DeviceTypeName(want)) + " tensors but the inputs are on " +
                       entry->device.str());
    }
    for (const Tensor& t : cap.lifted) {
      if (!inputs.empty() && t.device() != entry->device) {
        throw GraphError(
            "Expected all tensors to be on the same device, but found at least two devices, " +
            entry->device.str() + " and " + t.device().str() +
            "! (a tensor the function uses "
            "but does not take as an input)");
      }
    }
    entry->externs = std::move(cap.externs);
    entry->lifted = std::move(cap.lifted);
    CxxToolchain tc = CxxToolchain::Current();
    auto program = std::make_shared<Program>();
    {
      RecordScope scope(kPasses);
      *program = PlanProgram(std::move(cap.graph), options.backend, tc.Identity());
    }
    info->graph = program->graph.ToString();
    info->fusion = program->fusion.ToString(program->graph);
    info->memory = program->memory.ToString();
    info->kernels = static_cast<int>(program->fusion.kernels.size());
    for (const Step& s : program->fusion.steps) info->extern_ops += s.kind == Step::kExtern;
    info->materialized_bytes = program->memory.materialized_bytes;
    info->eager_bytes = program->memory.eager_bytes;
    const bool device_program = backend->SupportsPrograms();
    if (!device_program && !backend->RunsHostCode()) {
      throw GraphError("the " + std::string(backend->name()) +
                       " backend runs neither device programs nor host code");
    }
    if (device_program) {
      for (const Step& s : program->fusion.steps) {
        if (s.kind != Step::kExtern) continue;
        throw GraphError("the " + std::string(backend->name()) +
                         " backend lowers pointwise ops and reductions only; " +
                         program->graph.node(s.index).name() +
                         " cannot be part of a device program");
      }
    }
    {
      RecordScope scope(kCodegen);
      GenerateSource(program.get());
    }
    for (size_t k = 0; k < program->fusion.kernels.size(); ++k) {
      entry->kernel_names.push_back(InternName(
          KernelProfileName(program->graph, program->fusion.kernels[k], static_cast<int>(k))));
    }
    if (!program->fusion.kernels.empty()) {
      RecordScope scope(kCxx);
      CacheLookup got = KernelCache::Global().GetOrCompile(
          program->key, program->source, static_cast<int>(program->fusion.kernels.size()), tc,
          options.cache_dir, options.disk_cache);
      info->source_path = got.source_path;
      if (!got.module) throw GraphError(got.status.message());
      info->cache = CacheSourceName(got.source);
      entry->module = got.module;
    }
    if (device_program) {
      ProgramCallLayout(*program, &entry->program_inputs, &entry->program_outputs);
      entry->device_program = backend->BuildProgram(
          DescribeProgram(*program), "opscope_compiled_" + program->key,
          GeneratedKernels(program, entry->module, entry->program_inputs, entry->program_outputs));
    }
    entry->program = std::move(program);
  } catch (const std::exception& e) {
    info->fallback_reason = e.what();
  }
}

std::vector<Tensor> RunEntry(const CompiledEntry& e, std::span<const Tensor> inputs) {
  CallValues cv = Materialize(e, inputs);
  if (e.device_program) {
    // One device execution; the backend runs the generated kernels when it gets to it. Tensors
    // released after this returns are freed behind the queued work (DeviceBackend::Free).
    std::vector<TensorRef> ins, outs;
    for (int v : e.program_inputs) ins.push_back(MakeTensorRef(cv.values[v]));
    for (int v : e.program_outputs) outs.push_back(MakeTensorRef(cv.values[v]));
    if (!outs.empty()) {
      e.backend->ExecuteProgram(*e.device_program, ins, outs, CurrentOpCorrelation());
    }
    return Outputs(e, cv);
  }
  const Program& p = *e.program;
  bool record = ProfilingActive();
  for (const Step& step : p.fusion.steps) {
    if (step.kind == Step::kExtern) {
      RunExtern(e, cv, step.index);
      continue;
    }
    const FusedKernel& k = p.fusion.kernels[step.index];
    std::vector<const float*> in;
    std::vector<float*> out;
    for (int v : k.inputs) in.push_back(cv.Address(v));
    for (int v : k.outputs) out.push_back(cv.Address(v));
    if (record) {
      RecordScope scope(e.kernel_names[step.index]);
      e.module->kernels[step.index](in.data(), out.data());
    } else {
      e.module->kernels[step.index](in.data(), out.data());
    }
  }
  return Outputs(e, cv);
}

}  // namespace opscope::compiler
