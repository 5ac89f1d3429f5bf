// opscope demo rmsnorm [--device neuron|cpu] [--shape ROWS,HIDDEN] [--iters N] [--no-sync]
//                      [--out DIR] [--json]: the RMSNorm case study (tools/demo_rmsnorm.h).
// opscope demo allreduce --ranks N [--straggler R --delay-us D] [--out DIR]: a data-parallel step
//                      on N simulated NeuronCores (tools/demo_allreduce.h).
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "opscope/job.h"
#include "opscope/neuron.h"
#include "opscope/status.h"
#include "tools/commands.h"
#include "tools/demo_allreduce.h"
#include "tools/demo_compiled.h"
#include "tools/demo_rmsnorm.h"

namespace opscope::tools {
namespace {

struct DemoArgs {
  DemoOptions options;
  std::string shape;
  bool shape_given = false;  // --shape was on the command line (even empty)
  std::string device_config;
  std::string preset;
  bool no_sync = false;
  bool json = false;
};

// A positive decimal integer that fits int64, and nothing else.
bool ParsePositive(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && *out > 0;
}

// "ROWS,HIDDEN" -> sizes whose f32 tensor's bytes fit int64 (the allocator then says whether the
// device holds it); kInvalidArgument on anything else.
Status ParseShape(const std::string& text, int64_t* rows, int64_t* hidden) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos || !ParsePositive(std::string_view(text).substr(0, comma), rows) ||
      !ParsePositive(std::string_view(text).substr(comma + 1), hidden)) {
    return Status::InvalidArgument(
        "--shape expects ROWS,HIDDEN with two positive integers (e.g. 128,4096), got '" + text +
        "'");
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(*rows, *hidden, &bytes) ||
      __builtin_mul_overflow(bytes, int64_t{4}, &bytes)) {
    return Status::InvalidArgument(
        fmt::format("--shape {}: a [{}, {}] f32 tensor has more bytes than a 64-bit size can count",
                    text, *rows, *hidden));
  }
  return Status::Ok();
}

int RunDemo(DemoArgs& args) {
  DemoOptions& o = args.options;
  if (args.shape_given) {
    const Status st = ParseShape(args.shape, &o.rows, &o.hidden);
    if (!st.ok()) {
      std::fprintf(stderr, "opscope demo rmsnorm: %s\n", st.message().c_str());
      return 2;
    }
  }
  o.sync = !args.no_sync;
  try {
    if (!args.device_config.empty() || !args.preset.empty()) {
      neuron::ModelConfig config = neuron::ModelConfig::FromEnvironment();
      if (!args.preset.empty()) config = neuron::ModelConfig::Preset(args.preset);
      if (!args.device_config.empty()) config.ApplyOverridesFile(args.device_config);
      neuron::ResetDefaultDevice(config);
    }
    std::vector<DemoVariant> variants = RmsNormVariants();
    variants.push_back(CompiledRmsNormVariant());  // naive code under compile()
    DemoReport report = RunRmsNormDemo(o, variants);
    if (args.json) {
      std::string out = FormatDemoJson(report);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fputc('\n', stdout);
      for (const auto& v : report.variants) {
        std::string w = InFlightWarning(v);
        std::fwrite(w.data(), 1, w.size(), stderr);
      }
    } else {
      std::string out = FormatDemoText(report) + CompiledVsFusedLine(report);
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope demo rmsnorm: %s\n", e.what());
    return 1;
  }
  return 0;
}

// The job report on the demo's own traces: what `opscope report DIR` will say.
std::string JobFinding(const AllReduceDemoResult& r) {
  std::vector<RankSummary> ranks;
  for (const std::string& path : r.trace_paths) {
    ranks.push_back(LoadRankSummary({path, 0, RankFromPath(path)}));
  }
  const JobReport job = AnalyzeJob(std::move(ranks));
  if (!job.error.empty()) return "opscope report: " + job.error + "\n";
  if (job.findings.empty()) return "opscope report finds no straggler\n";
  return "opscope report finds: " + job.findings.front() + "\n";
}

int RunAllReduce(const AllReduceDemoOptions& options) {
  try {
    const AllReduceDemoResult result = RunAllReduceDemo(options);
    const std::string out = FormatAllReduceDemo(result) + JobFinding(result);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope demo allreduce: %s\n", e.what());
    return 1;
  }
  return 0;
}

void AddAllReduceCommand(CLI::App* demo, int* exit_code) {
  auto options = std::make_shared<AllReduceDemoOptions>();
  auto* cmd = demo->add_subcommand(
      "allreduce",
      "N simulated NeuronCores (one thread each) run matmul then all_reduce over a NeuronLink "
      "ring, one trace per rank in Neuron's layout; --straggler makes one rank's compute longer");
  cmd->add_option("--ranks", options->ranks, "simulated NeuronCores, one rank each (default 4)");
  cmd->add_option("--steps", options->steps,
                  "training steps (default 5; ranks x steps at most 100,000)");
  cmd->add_option("--straggler", options->straggler,
                  "the rank whose compute is longer (0 to --ranks minus 1; default none)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            return text.starts_with('-') ? "expected a rank, 0 or more, got '" + text + "'" : "";
          },
          "RANK", "rank"));
  cmd->add_option("--delay-us", options->delay_us,
                  "how much longer the straggler computes every step, in us");
  cmd->add_option("--out", options->out_dir,
                  "write traces to DIR/<host>_pid_<pid>/<timestamp>/rank_<r>/trace.json "
                  "(default profiles)");
  cmd->add_option("--preset", options->preset, "Neuron model preset: trn1 (default) or trn2");
  cmd->callback([options, exit_code] { *exit_code = RunAllReduce(*options); });
}

}  // namespace

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto* demo = app.add_subcommand("demo", "Run a profiling case study");
  demo->require_subcommand(1);
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = demo->add_subcommand(
      "rmsnorm",
      "Profile RMSNorm naive vs fused vs compiled on the simulated Neuron device (or cpu) and "
      "print key_averages tables sorted by device time");
  cmd->add_option("--device", args->options.device,
                  "neuron (default, = neuron:0), neuron:N or cpu");
  auto* shape = cmd->add_option("--shape", args->shape, "ROWS,HIDDEN of x (default 128,4096)");
  cmd->add_option("--iters", args->options.iters,
                  "profiled iterations per variant (default 10, at most 1000: each keeps its "
                  "trace events)")
      ->check(CLI::Range(1, kMaxDemoIters));
  cmd->add_option("--warmup", args->options.warmup,
                  "unprofiled warm-up iterations (default 2, at most 1000)")
      ->check(CLI::Range(0, kMaxDemoIters));
  cmd->add_flag("--no-sync", args->no_sync,
                "do not synchronize the device inside the profiled loop (the pitfall)");
  cmd->add_flag("--flush-on-stop", args->options.flush_on_stop,
                "with --no-sync: have the profiler flush the device at stop (the fix)");
  cmd->add_option("--out", args->options.out_dir,
                  "write traces to DIR/<host>_pid_<pid>/<timestamp>/<variant>/trace.json");
  cmd->add_flag("--json", args->json, "print the results as JSON");
  cmd->add_option("--device-config", args->device_config,
                  "key=value file overriding the Neuron model's parameters "
                  "(docs/neuron-model.md; also $OPSCOPE_NEURON_CONFIG)");
  cmd->add_option("--preset", args->preset, "Neuron model preset: trn1 (default) or trn2");
  cmd->callback([args, shape, exit_code] {
    args->shape_given = shape->count() > 0;
    *exit_code = RunDemo(*args);
  });
  AddAllReduceCommand(demo, exit_code);
}

}  // namespace opscope::tools
