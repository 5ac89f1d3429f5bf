// opscope model OP --shape A,B[,C[,D]] | --graph FILE [--dtype f32|bf16|fp8] [--preset trn1|trn2]
//                 [--device-config FILE] [--eager] [--json]
// The modelled device time of one execution of one op (or a small op graph) on the simulated
// NeuronCore, with the per-phase and per-engine breakdown (docs/neuron-model.md).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "opscope/export.h"
#include "opscope/neuron.h"
#include "tools/commands.h"

namespace opscope::tools {
namespace {

struct ModelArgs {
  std::string op;
  std::string shape;
  std::string graph;
  std::string dtype = "f32";
  std::string preset;
  std::string device_config;
  bool eager = false;
  bool json = false;
};

// "A,B,C" -> sizes; a message on anything else.
std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    const std::string part =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno != 0 || v < 1) {
      throw neuron::ModelError(
          "--shape expects up to 4 positive integers separated by commas "
          "(e.g. 128,4096), got '" +
          text + "'");
    }
    shape.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (shape.size() > 4)
    throw neuron::ModelError("--shape takes at most 4 dims, got '" + text + "'");
  return shape;
}

struct Report {
  std::string label;
  neuron::ModelConfig config;
  neuron::ModelEstimate estimate;
  bool eager = false;
};

double Us(int64_t ns) { return double(ns) / 1e3; }

// Lanes of each engine kind on one logical core (DMA: its queues).
double Lanes(neuron::Engine e, const Report& r) { return r.estimate.lanes[size_t(e)]; }

std::string FormatText(const Report& r) {
  const neuron::ProgramCost& c = r.estimate.cost;
  std::string out = fmt::format(
      "opscope model {}: {} on the simulated NeuronCore (preset {}, {} physical core{} per "
      "logical core)\n",
      r.label, r.estimate.dtype, r.config.preset(), r.config.Get("logical_core_size"),
      r.config.Get("logical_core_size") == 1 ? "" : "s");
  out += fmt::format(
      "device time: {:.2f} us per execution ({})\n\n", Us(c.device_ns),
      r.eager ? "the framework's eager path: binding and dispatch per execution"
              : "steady state: the same program back to back, as a kernel benchmark measures it");
  out += fmt::format("{:<18}{:>12}\n", "phase", "us");
  for (int i = 0; i < neuron::kNumExecPhases; ++i) {
    if (c.phase_ns[size_t(i)] == 0) continue;
    out += fmt::format("{:<18}{:>12.3f}\n", neuron::ExecPhaseName(neuron::ExecPhase(i)),
                       Us(c.phase_ns[size_t(i)]));
  }
  out += fmt::format("\n{:<18}{:>12}{:>14}\n", "engine", "busy us", "utilization");
  for (int e = 0; e < neuron::kNumEngines; ++e) {
    const auto engine = neuron::Engine(e);
    const double util = c.makespan_ns > 0 ? double(c.busy_ns[size_t(e)]) /
                                                (Lanes(engine, r) * double(c.makespan_ns))
                                          : 0;
    out += fmt::format("{:<18}{:>12.3f}{:>13.1f}%\n",
                       engine == neuron::Engine::kDma
                           ? fmt::format("DMA ({} queues)", Lanes(engine, r))
                           : std::string(neuron::EngineName(engine)),
                       Us(c.busy_ns[size_t(e)]), 100 * util);
  }
  const double gbps = c.makespan_ns > 0 ? double(c.dma_bytes) / double(c.makespan_ns) : 0;
  out += fmt::format(
      "\n{} ops, {} instructions; DMA {:.3f} MiB ({:.1f} GB/s over the engine time), spills "
      "{:.3f} MiB\n",
      r.estimate.ops, c.instructions, double(c.dma_bytes) / (1024.0 * 1024), gbps,
      double(c.spill_bytes) / (1024.0 * 1024));
  if (!r.eager) {
    out += fmt::format(
        "eager path (--eager): + {:.1f} us binding {} I/O tensors + {:.1f} us eager dispatch; a "
        "core switching from another program adds {:.1f} us\n",
        r.config.Get("tensor_bind_us") * double(r.estimate.io_tensors), r.estimate.io_tensors,
        r.config.Get("eager_dispatch_us"), r.config.Get("program_switch_us"));
  } else {
    out += fmt::format("a core switching from another program adds {:.1f} us\n",
                       r.config.Get("program_switch_us"));
  }
  return out;
}

std::string FormatJson(const Report& r, const ModelArgs& a) {
  const neuron::ProgramCost& c = r.estimate.cost;
  std::string shape;
  if (!a.shape.empty()) {
    for (int64_t d : ParseShape(a.shape)) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  }
  std::string phases, engines;
  for (int i = 0; i < neuron::kNumExecPhases; ++i) {
    phases += fmt::format("{}\"{}\": {:.3f}", i ? ", " : "",
                          neuron::ExecPhaseName(neuron::ExecPhase(i)), Us(c.phase_ns[size_t(i)]));
  }
  for (int e = 0; e < neuron::kNumEngines; ++e) {
    const auto engine = neuron::Engine(e);
    const double util = c.makespan_ns > 0 ? double(c.busy_ns[size_t(e)]) /
                                                (Lanes(engine, r) * double(c.makespan_ns))
                                          : 0;
    engines += fmt::format(
        "{}\"{}\": {{\"busy_us\": {:.3f}, \"utilization\": {:.4f}, \"lanes\": "
        "{}}}",
        e ? ", " : "", neuron::EngineName(engine), Us(c.busy_ns[size_t(e)]), util,
        Lanes(engine, r));
  }
  return fmt::format(
      "{{\"op\": {}, \"graph\": {}, \"shape\": [{}], \"dtype\": \"{}\", \"preset\": {}, "
      "\"eager\": {}, \"device_us\": {:.3f}, \"engines_us\": {:.3f}, \"phases_us\": {{{}}}, "
      "\"breakdown\": {{{}}}, \"ops\": {}, \"instructions\": {}, \"dma_bytes\": {}, "
      "\"spill_bytes\": {}, \"dma_gbps\": {:.2f}, \"program_switch_us\": {:.3f}}}",
      JsonQuote(a.op), JsonQuote(a.graph), shape, r.estimate.dtype, JsonQuote(r.config.preset()),
      r.eager, Us(c.device_ns), Us(c.makespan_ns), phases, engines, r.estimate.ops, c.instructions,
      c.dma_bytes, c.spill_bytes,
      c.makespan_ns > 0 ? double(c.dma_bytes) / double(c.makespan_ns) : 0.0,
      r.config.Get("program_switch_us"));
}

int RunModel(const ModelArgs& a) {
  try {
    if (a.graph.empty() == a.op.empty()) {
      throw neuron::ModelError("give an OP with --shape, or --graph FILE (not both)");
    }
    if (!a.op.empty() && a.shape.empty()) throw neuron::ModelError("OP needs --shape A,B[,C[,D]]");
    Report r;
    r.config = neuron::ModelConfig::FromEnvironment();
    if (!a.preset.empty()) r.config = neuron::ModelConfig::Preset(a.preset);
    if (!a.device_config.empty()) r.config.ApplyOverridesFile(a.device_config);
    r.eager = a.eager;
    if (!a.graph.empty()) {
      r.estimate = neuron::EstimateModelGraph(a.graph, a.dtype, r.config, a.eager);
      r.label = "--graph " + a.graph;
    } else {
      r.estimate = neuron::EstimateModelOp(a.op, ParseShape(a.shape), a.dtype, r.config, a.eager);
      r.label = a.op + " --shape " + a.shape;
    }
    const std::string out = a.json ? FormatJson(r, a) + "\n" : FormatText(r);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope model: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

void AddModelCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ModelArgs>();
  std::string ops;
  for (const auto& n : neuron::ModelOpNames()) ops += (ops.empty() ? "" : ", ") + n;
  auto* cmd = app.add_subcommand(
      "model",
      "Print the modelled device time of one execution of an op (or an op graph) on the "
      "simulated NeuronCore, with its per-engine breakdown");
  cmd->add_option("op", args->op, "the op: " + ops);
  cmd->add_option("--shape", args->shape,
                  "A,B[,C[,D]]: rows,cols for elementwise and norms; M,K,N for mm; B,M,K,N for "
                  "bmm");
  cmd->add_option("--graph", args->graph,
                  "a small op graph file instead of OP (format: docs/neuron-model.md)");
  cmd->add_option("--dtype", args->dtype, "f32 (default), bf16, or fp8 (mm and bmm inputs)");
  cmd->add_option("--preset", args->preset, "trn1 (default) or trn2");
  cmd->add_option("--device-config", args->device_config,
                  "key=value file overriding model parameters (also $OPSCOPE_NEURON_CONFIG)");
  cmd->add_flag("--eager", args->eager,
                "add the framework eager path's per-execution costs (tensor binding, dispatch)");
  cmd->add_flag("--json", args->json, "print the result as JSON");
  cmd->callback([args, exit_code] { *exit_code = RunModel(*args); });
}

}  // namespace opscope::tools
