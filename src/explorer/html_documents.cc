// The documents the HTML reports render (opscope/html_report.h): each kind's `--json` document
// with the chart data beside it (overview per stream, memory curves downsampled, a timeline per
// device), wrapped in the page by HtmlPage.
#include <algorithm>
#include <filesystem>

#include "base/json_escape.h"
#include "base/json_writer.h"
#include "opscope/html_report.h"
#include "opscope/overview.h"

namespace opscope {
namespace {

// Keeps at most `points` samples of a curve: per equal time bucket its lowest and highest sample
// in time order, so the peak (the highest sample of its bucket) and every dip stay.
std::vector<DeviceMemory::Sample> Downsample(const std::vector<DeviceMemory::Sample>& samples,
                                             int points) {
  const size_t buckets = static_cast<size_t>(std::max(points / 2, 1));
  if (samples.size() <= static_cast<size_t>(std::max(points, 2))) return samples;
  const int64_t t0 = samples.front().ts_ns, t1 = samples.back().ts_ns;
  const double width = std::max(1.0, static_cast<double>(t1 - t0) / static_cast<double>(buckets));
  std::vector<DeviceMemory::Sample> out;
  size_t i = 0;
  while (i < samples.size()) {
    const size_t bucket = static_cast<size_t>(static_cast<double>(samples[i].ts_ns - t0) / width);
    size_t lo = i, hi = i, j = i;
    for (; j < samples.size() &&
           static_cast<size_t>(static_cast<double>(samples[j].ts_ns - t0) / width) == bucket;
         ++j) {
      if (samples[j].allocated < samples[lo].allocated) lo = j;
      if (samples[j].allocated > samples[hi].allocated) hi = j;
    }
    out.push_back(samples[std::min(lo, hi)]);
    if (lo != hi) out.push_back(samples[std::max(lo, hi)]);
    i = j;
  }
  return out;
}

// One timeline per device process holding device activity, named as the process is.
std::string DeviceTimelinesJson(const Trace& trace) {
  std::vector<bool> holds(trace.processes().size(), false);
  for (const Slice& s : trace.slices()) {
    if ((s.kind == ActivityKind::kKernel || s.kind == ActivityKind::kMemcpy ||
         s.kind == ActivityKind::kMemset) &&
        s.track != kNone && trace.tracks()[s.track].process != kNone) {
      holds[trace.tracks()[s.track].process] = true;
    }
  }
  JsonWriter w;
  w.BeginArray();
  for (uint32_t p = 0; p < holds.size(); ++p) {
    if (!holds[p]) continue;
    const Process& proc = trace.processes()[p];
    const std::string type =
        trace.metadata().device_type.empty() ? "device" : trace.metadata().device_type;
    const std::string device =
        proc.labels != 0 ? std::string(trace.Str(proc.labels))
        : proc.name != 0
            ? std::string(trace.Str(proc.name))
            : type + " " + (proc.pid_text.empty() ? std::to_string(proc.pid) : proc.pid_text);
    // {"device": ..., then the timeline's own keys.
    const std::string timeline = ComputeDeviceTimeline(trace, p).ToJson();
    w.Raw("{\"device\":" + internal::JsonString(device) + "," + timeline.substr(1));
  }
  w.EndArray();
  return w.Take();
}

// The critical path's edge list ("critical_path": {..., "path": [...]}) has one entry per edge of
// the whole path, unbounded by the row limit (millions on a long trace); the page draws the
// breakdown and lists the events, so the edges are left out (their count stays in "path_edges").
// Keys and structure are written by JsonWriter: a '"' inside a name is always escaped.
void DropCriticalPathEdges(std::string* json) {
  const size_t cp = json->find("\"critical_path\":{");
  if (cp == std::string::npos) return;
  const std::string_view key = "\"path\":[";
  const size_t at = json->find(key, cp);
  if (at == std::string::npos) return;
  size_t depth = 0, end = at + key.size() - 1;
  bool in_string = false;
  for (; end < json->size(); ++end) {
    const char c = (*json)[end];
    if (in_string) {
      if (c == '\\') {
        ++end;  // an escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      break;
    }
  }
  if (end >= json->size()) return;
  json->replace(at, end + 1 - at, "\"path\":[]");
}

std::string Title(std::string_view given, std::string_view fallback) {
  return std::string(given.empty() ? fallback : given);
}

std::string FileName(std::string_view path) {
  return path.empty() ? std::string("(in memory)")
                      : std::filesystem::path(std::string(path)).filename().string();
}

// {"opscope_html": 1, "kind", "title", "rows", "engine", then the caller's keys.
void BeginDocument(JsonWriter* w, std::string_view kind, const std::string& title,
                   const HtmlOptions& options) {
  w->BeginObject();
  w->Field("opscope_html", 1);
  w->Field("kind", kind);
  w->Field("title", title);
  w->Field("rows", options.rows);
  w->Field("engine", HtmlChartEngine());
}

}  // namespace

std::string TraceHtml(const Trace& trace, const ReportOptions& report, const HtmlOptions& options) {
  ReportOptions ro = report;
  ro.rows = options.rows;
  ro.memory = false;  // the memory curves go under "charts", downsampled
  const std::string title = Title(options.title, "opscope report: " + FileName(report.file));
  JsonWriter w;
  BeginDocument(&w, "trace", title, options);
  w.Field("command", std::string("opscope report") + (ro.perf ? " --perf" : "") +
                         " --json --rows " + std::to_string(options.rows));
  w.Key("report");
  std::string report_json = ReportJson(trace, ro);
  DropCriticalPathEdges(&report_json);
  w.Raw(report_json);
  w.Key("charts");
  w.BeginObject();
  w.Key("overview");
  w.Raw(ComputeTraceOverview(trace, {.columns = options.columns, .max_tracks = options.max_tracks})
            .ToJson());
  w.Key("device_timelines");
  w.Raw(DeviceTimelinesJson(trace));
  MemoryTimeline memory =
      ComputeMemoryTimeline(trace, options.rows < 0 ? SIZE_MAX : static_cast<size_t>(options.rows));
  for (DeviceMemory& d : memory.devices) d.samples = Downsample(d.samples, options.memory_points);
  w.Key("memory");
  w.Raw(memory.ToJson(true));
  w.Field("memory_points", options.memory_points);
  w.EndObject();
  w.EndObject();
  return HtmlPage(title, w.Take());
}

std::string JobHtml(const JobReport& job, const HtmlOptions& options) {
  const std::string title =
      Title(options.title, "opscope report: job of " + std::to_string(job.ranks.size()) + " ranks");
  JsonWriter w;
  BeginDocument(&w, "job", title, options);
  w.Field("command", "opscope report DIR --json");
  w.Key("report");
  w.Raw(JobReportJson(job));
  w.EndObject();
  return HtmlPage(title, w.Take());
}

std::string TraceDiffHtml(const Trace& a, const Trace& b, std::string_view name_a,
                          std::string_view name_b, const HtmlOptions& options) {
  const std::string title =
      Title(options.title, "opscope diff: " + FileName(name_a) + " -> " + FileName(name_b));
  JsonWriter w;
  BeginDocument(&w, "diff", title, options);
  w.Field("command", "opscope diff A B --json");
  w.Field("a", name_a);
  w.Field("b", name_b);
  w.Key("diff");
  w.Raw(DiffTraces(a, b).ToJson());
  w.EndObject();
  return HtmlPage(title, w.Take());
}

std::string JobDiffHtml(const JobReport& a, const JobReport& b, std::string_view name_a,
                        std::string_view name_b, const HtmlOptions& options) {
  const std::string title =
      Title(options.title, "opscope diff: " + FileName(name_a) + " -> " + FileName(name_b));
  JsonWriter w;
  BeginDocument(&w, "job_diff", title, options);
  w.Field("command", "opscope diff A B --json");
  w.Field("a", name_a);
  w.Field("b", name_b);
  w.Key("diff");
  w.Raw(JobDiffJson(a, b));
  w.EndObject();
  return HtmlPage(title, w.Take());
}

std::string CheckHtml(const CheckResult& result, const HtmlOptions& options) {
  const std::string title =
      Title(options.title, "opscope check: " + std::string(ToString(result.verdict)));
  JsonWriter w;
  BeginDocument(&w, "check", title, options);
  w.Field("command", "opscope check BASELINE CANDIDATE --json");
  w.Key("check");
  w.Raw(result.ToJson());
  w.EndObject();
  return HtmlPage(title, w.Take());
}

}  // namespace opscope
