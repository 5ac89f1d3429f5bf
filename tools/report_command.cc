// opscope report PATH... [--sort KEY] [--rows N] [--json] [--group-by-input-shape] [--memory]
//                       [--rank N]
//                       [--threads N] [--quiet] [--no-clock-align] [--perf] [--device-spec
//                       NAME|FILE] [--step TEXT]
//                       [--step-instance N] [--consecutive-kernel-delay-us US] [--html OUT]:
// import a profile in any format opscope reads (docs/formats.md) and print key_averages, the
// device timeline (per device when there are several), top kernels and launch statistics, with
// --perf also the performance model, idle-time breakdown and critical path; paths naming several
// traces are one distributed job, one trace per rank (tools/job_commands.h). --html OUT also
// writes a self-contained HTML report (opscope/html_report.h).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>

#include "opscope/analysis.h"
#include "opscope/html_report.h"
#include "opscope/import.h"
#include "opscope/neuron.h"
#include "tools/commands.h"
#include "tools/html_output.h"
#include "tools/job_commands.h"
#include "tools/progress.h"

namespace opscope::tools {

namespace {

// One trace's --perf options (docs/perf-model.md).
struct PerfArgs {
  bool perf = false;
  std::string device_spec;
  std::string step = "ProfilerStep";
  int step_instance = 0;
  double consecutive_kernel_delay_us = 30;
};

struct ReportArgs {
  std::string path;
  std::string sort_by;
  int rows = 20;
  bool json = false;
  int threads = 0;
  bool quiet = false;
  bool group_by_input_shape = false;
  PerfArgs perf;
  bool memory = false;
  std::string html;
  int html_rows = kHtmlDefaultRows;
};

int RunReport(const ReportArgs& args);

// The simulated NeuronCore's peaks, from its model's parameters (docs/neuron-model.md): TensorE
// moves one column of 16-bit data per cycle through its partitions x partitions array (2 FLOPs
// per cell), FP32 and FP8 at the model's dtype factors; VectorE streams vector_elems_per_cycle
// (16-bit: vector_elems_per_cycle_16bit) elements per cycle, one FLOP each; HBM per core.
std::vector<DeviceSpec> SimulatedNeuronSpecs() {
  std::vector<DeviceSpec> specs;
  for (const std::string& preset : neuron::ModelConfig::PresetNames()) {
    const neuron::ModelConfig config = neuron::ModelConfig::Preset(preset);
    auto p = [&config](std::string_view key) { return config.Get(key); };
    DeviceSpec s;
    s.name = "opscope-neuron-" + preset;
    s.source = "opscope's simulated NeuronCore, " + preset +
               " preset (src/device/neuron/params.cc, docs/neuron-model.md)";
    s.mem_bw_gbps = p("hbm_gbps");
    const double tensor16 =
        2 * p("partitions") * p("partitions") * p("tensor_ghz") / 1e3;  // TFLOPS
    s.tflops.emplace_back("matrix_bf16", tensor16);
    s.tflops.emplace_back("matrix_fp16", tensor16);
    s.tflops.emplace_back("matrix_fp32", tensor16 / p("tensor_fp32_factor"));
    s.tflops.emplace_back("matrix_tf32", tensor16 / p("tensor_fp32_factor"));
    s.tflops.emplace_back("matrix_fp8", tensor16 / p("tensor_fp8_factor"));
    s.tflops.emplace_back("vector_fp32", p("vector_elems_per_cycle") * p("vector_ghz") / 1e3);
    s.tflops.emplace_back("vector_bf16", p("vector_elems_per_cycle_16bit") * p("vector_ghz") / 1e3);
    s.tflops.emplace_back("vector_fp16", p("vector_elems_per_cycle_16bit") * p("vector_ghz") / 1e3);
    specs.push_back(std::move(s));
  }
  return specs;
}

// One trace file: today's single-trace report; several: the job report. Under mpirun the rank
// files are spread over the processes and process 0 prints.
int RunReportOrJob(const JobReportArgs& job_args, bool group_by_input_shape, const PerfArgs& perf,
                   bool memory) {
  MpiJob mpi(nullptr, nullptr);
  if (!mpi.error().empty()) {
    std::fprintf(stderr, "opscope report: %s\n", mpi.error().c_str());
    return 2;
  }
  const ReportArgs single{
      job_args.paths.front(), job_args.sort_by,     job_args.rows, job_args.json, job_args.threads,
      job_args.quiet,         group_by_input_shape, perf,          memory,        job_args.html,
      job_args.html_rows};
  std::vector<std::string> parts;  // a file of several hosts' profiles is a job
  if (job_args.paths.size() == 1 && job_args.rank < 0 &&
      !std::filesystem::is_directory(job_args.paths.front()) &&
      (!ListTraceParts(job_args.paths.front(), &parts).ok() || parts.empty())) {
    // One file: today's report, errors included.
    return mpi.ShareExitCode(mpi.rank() == 0 ? RunReport(single) : 0);
  }
  std::vector<RankFile> files;
  const Status found = ResolveTraceFiles(job_args.paths, &files);
  if (!found.ok()) {
    if (mpi.rank() == 0) std::fprintf(stderr, "opscope report: %s\n", found.message().c_str());
    return mpi.ShareExitCode(1);
  }
  if (files.size() == 1 && job_args.rank < 0) {
    ReportArgs one = single;
    one.path = files.front().path;
    return mpi.ShareExitCode(mpi.rank() == 0 ? RunReport(one) : 0);
  }
  if (perf.perf || !perf.device_spec.empty()) {
    if (mpi.rank() == 0) {
      std::fprintf(stderr,
                   "opscope report: --perf and --device-spec apply to one trace; %zu given\n",
                   files.size());
    }
    return mpi.ShareExitCode(1);
  }
  return RunJobReport(job_args, files, mpi);
}

int RunReport(const ReportArgs& args) {
  Trace trace;
  ImportStats stats;
  ImportOptions import_options;
  import_options.threads = args.threads;
  ProgressBar progress("import " + std::filesystem::path(args.path).filename().string(),
                       args.quiet);
  import_options.progress = progress.Callback();
  Status st = ImportTrace(args.path, &trace, &stats, import_options);
  progress.Done();
  if (!st.ok()) {
    std::fprintf(stderr, "opscope report: %s\n", st.message().c_str());
    return 1;
  }
  for (const std::string& w : stats.warnings) {
    std::fprintf(stderr, "opscope report: warning: %s\n", w.c_str());
  }
  if (stats.skipped > stats.warnings.size()) {
    std::fprintf(stderr, "opscope report: %llu events skipped in all\n",
                 static_cast<unsigned long long>(stats.skipped));
  }
  ReportOptions options;
  options.sort_by = args.sort_by;
  options.rows = args.rows;
  options.file = args.path;
  options.group_by_input_shape = args.group_by_input_shape;
  options.perf = args.perf.perf || !args.perf.device_spec.empty();
  options.device_spec = args.perf.device_spec;
  if (options.perf) options.extra_device_specs = SimulatedNeuronSpecs();
  options.critical_path_step = args.perf.step;
  options.critical_path_instance = args.perf.step_instance;
  options.consecutive_kernel_delay_us = args.perf.consecutive_kernel_delay_us;
  options.memory = args.memory;
  options.threads = args.threads;
  if (const Status valid = ValidateReportOptions(trace, options); !valid.ok()) {
    std::fprintf(stderr, "opscope report: %s\n", valid.message().c_str());
    return 1;
  }
  try {
    if (!args.html.empty()) {
      // The page always holds the performance model, idle breakdown and critical path.
      ReportOptions html_report = options;
      html_report.perf = true;
      html_report.extra_device_specs = SimulatedNeuronSpecs();
      HtmlOptions html;
      html.rows = args.html_rows;
      if (!WriteHtmlOutput("report", args.html, TraceHtml(trace, html_report, html))) return 1;
      if (!args.json) return 0;
    }
    const std::string out = args.json ? ReportJson(trace, options) : FormatReport(trace, options);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (args.json) std::fputc('\n', stdout);
  } catch (const std::exception& e) {  // a sort key key_averages does not know (BadSortKey)
    std::fprintf(stderr, "opscope report: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<JobReportArgs>();
  auto group_by_input_shape = std::make_shared<bool>(false);
  auto perf = std::make_shared<PerfArgs>();
  auto memory = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "report",
      "Summarise a profile (torch.profiler / Kineto JSON, XLA XPlane, XProf trace JSON, Nsight "
      "Systems SQLite export): key_averages, device timeline (per device too), top kernels, "
      "launch statistics; several traces (files or folders, one per rank) as one distributed "
      "job: per-rank timeline, collectives, stragglers");
  cmd->add_option("paths", args->paths,
                  "Profiles (Kineto / Chrome trace JSON, plain or gzip; *.xplane.pb; nsys "
                  "*.sqlite exports) or folders of them")
      ->required();
  cmd->add_option("--sort", args->sort_by,
                  "key_averages sort key (self_cpu_time_total, cpu_time_total, "
                  "device_time_total, self_cuda_time_total, count, ...)");
  auto* rows = cmd->add_option(
      "--rows", args->rows,
      "Rows per table (default 20 in text, every row with --json, 500 with --html; -1 = all)");
  cmd->add_flag("--json", args->json, "Print one JSON document instead of tables");
  cmd->add_flag("--group-by-input-shape", *group_by_input_shape,
                "key_averages(group_by_input_shape=True): one row per op and Input Shapes (traces "
                "recorded with record_shapes); --json rows carry input_shapes");
  cmd->add_flag(
      "--memory", *memory,
      "Memory timeline per device from the trace's [memory] events (profile_memory=True): "
      "allocations, peak allocated and reserved, and the ops holding the most at the "
      "peak; --json adds \"memory\" with every sample");
  cmd->add_option("--rank", args->rank, "Job: print this rank's key_averages table");
  cmd->add_option("--threads", args->threads,
                  "Threads that parse a trace and compute its report; for a job, the cores each "
                  "process imports rank "
                  "files on, one file per core (default: the cores available, shared by the MPI "
                  "processes on a host; at most 256 are used; the report is the same for every "
                  "count)")
      ->transform(ThreadCountValidator());
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (none is drawn off a terminal)");
  cmd->add_flag("--stats", args->stats,
                "Job: print each process's rank files, MB imported, seconds, MB/s and peak RSS "
                "to stderr");
  cmd->add_flag("--no-clock-align{false}", args->align_clocks,
                "Job: compare ranks' timestamps as recorded (default: align each rank's clock "
                "to the lowest rank's from collective end times)");
  cmd->add_flag("--perf", perf->perf,
                "Also the performance model per op with its roofline (TraceLens), the idle-time "
                "breakdown per stream and the critical path (HTA); docs/perf-model.md");
  cmd->add_option("--device-spec", perf->device_spec,
                  "Roofline peaks: H100, H200, B200, MI300X, MI355X, trn1, trn2, "
                  "opscope-neuron-trn1|trn2, or a TraceLens arch JSON file (default: from the "
                  "trace's deviceProperties); implies --perf");
  cmd->add_option("--step", perf->step,
                  "Critical path: the step annotation to analyze (slices whose name contains it; "
                  "default ProfilerStep, else the whole trace)");
  cmd->add_option("--step-instance", perf->step_instance,
                  "Critical path: which matching step, from 0 (default 0)");
  cmd->add_option("--consecutive-kernel-delay-us", perf->consecutive_kernel_delay_us,
                  "Idle time per stream: gaps shorter than this after an already issued kernel "
                  "are kernel wait (HTA's consecutive_kernel_delay, in microseconds as HTA "
                  "compares it; default 30)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report (charts and sortable tables, data and "
                  "code inline; opens offline) to this file");
  cmd->callback([cmd, args, rows, group_by_input_shape, perf, memory, exit_code] {
    args->html_rows = rows->count() > 0 ? args->rows : kHtmlDefaultRows;
    // Machine-readable output is complete: scripts reading --json cannot know of a row limit.
    if (args->json && cmd->count("--rows") == 0) args->rows = -1;
    *exit_code = RunReportOrJob(*args, *group_by_input_shape, *perf, *memory);
  });
}

}  // namespace opscope::tools
