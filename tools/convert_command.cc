// opscope convert IN OUT [--threads N] [--quiet]: read a trace in any format opscope reads and
// write it in the format OUT's name asks for: `.pftrace` / `.perfetto-trace` (Perfetto protobuf),
// `.json` (Kineto / Chrome trace JSON), each gzip-compressed with a further `.gz`.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "opscope/export.h"
#include "opscope/import.h"
#include "tools/commands.h"
#include "tools/progress.h"

namespace opscope::tools {
namespace {

struct ConvertArgs {
  std::string in, out;
  int threads = 0;
  bool quiet = false;
};

enum class OutputFormat { kUnknown, kPerfetto, kChromeJson };

OutputFormat FormatOf(std::string name) {
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  if (name.ends_with(".pftrace") || name.ends_with(".perfetto-trace")) {
    return OutputFormat::kPerfetto;
  }
  if (name.ends_with(".json")) return OutputFormat::kChromeJson;
  return OutputFormat::kUnknown;
}

int RunConvert(const ConvertArgs& args) {
  const OutputFormat format = FormatOf(std::filesystem::path(args.out).filename().string());
  if (format == OutputFormat::kUnknown) {
    std::fprintf(stderr,
                 "opscope convert: cannot tell the output format from '%s': name it *.pftrace or "
                 "*.perfetto-trace (Perfetto), or *.json (Kineto / Chrome trace JSON), with .gz "
                 "after either to compress it\n",
                 args.out.c_str());
    return 2;
  }
  Trace trace;
  ImportStats stats;
  ImportOptions options;
  options.threads = args.threads;
  ProgressBar progress("import " + std::filesystem::path(args.in).filename().string(), args.quiet);
  options.progress = progress.Callback();
  const Status imported = ImportTrace(args.in, &trace, &stats, options);
  progress.Done();
  if (!imported.ok()) {
    std::fprintf(stderr, "opscope convert: %s (nothing was written)\n", imported.message().c_str());
    return 1;
  }
  for (const std::string& w : stats.warnings) {
    std::fprintf(stderr, "opscope convert: warning: %s\n", w.c_str());
  }
  const Status written = format == OutputFormat::kPerfetto ? WritePerfettoTrace(trace, args.out)
                                                           : WriteChromeTrace(trace, args.out);
  if (!written.ok()) {
    std::fprintf(stderr, "opscope convert: %s\n", written.message().c_str());
    return 1;
  }
  std::error_code ec;
  const uintmax_t bytes = std::filesystem::file_size(args.out, ec);
  if (!args.quiet) {
    std::printf("converted %s (%s, %zu slices, %.1f MB) to %s (%s, %.1f MB)\n", args.in.c_str(),
                std::string(TraceFormatName(stats.format)).c_str(), trace.slices().size(),
                stats.input_bytes / 1e6, args.out.c_str(),
                format == OutputFormat::kPerfetto ? "perfetto" : "kineto-json",
                ec ? 0.0 : static_cast<double>(bytes) / 1e6);
  }
  return 0;
}

}  // namespace

void AddConvertCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a trace (any format opscope reads) to Perfetto protobuf (OUT *.pftrace, "
      "*.perfetto-trace) or Kineto / Chrome trace JSON (OUT *.json); a further .gz compresses it");
  cmd->add_option("in", args->in, "The trace to read (Kineto JSON, Perfetto, ...)")->required();
  cmd->add_option("out", args->out, "The file to write; its name says the format")->required();
  cmd->add_option("--threads", args->threads,
                  "Threads that import the trace (default: the cores available)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet", args->quiet, "No progress bar and no summary line");
  cmd->callback([args, exit_code] { *exit_code = RunConvert(*args); });
}

}  // namespace opscope::tools
