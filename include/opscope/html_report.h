// Self-contained HTML reports: one file with the data and the code inline that opens from disk in
// any current browser, offline (`opscope report PATH --html OUT`, `opscope diff A B --html OUT`,
// `opscope check ... --html OUT`).
//
//   opscope::ReportOptions options{.perf = true};
//   std::string html = opscope::TraceHtml(trace, options);
//   opscope::Status st = opscope::WriteHtmlReport("report.html", html);
//
// The page embeds the JSON document of the matching `--json` output (`report --perf --json`,
// `report DIR --json`, `diff --json`, `check --json`) with the chart data beside it (the
// trace's overview per stream and the memory curves, downsampled), and renders every table from
// that document, so its numbers are the CLI's. Tables keep at most `HtmlOptions::rows` rows, and
// the page says so. Names from the trace are only ever inserted as text. The page's Content
// Security Policy forbids every request (no server, no CDN): its charting library (uPlot, from
// npm, compiled in at build time) and its own code are inline.
//
// Thread safety: pure functions over their arguments.
#ifndef OPSCOPE_HTML_REPORT_H_
#define OPSCOPE_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "opscope/analysis.h"
#include "opscope/check.h"
#include "opscope/job.h"
#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

struct HtmlOptions {
  std::string title;         // the page's title; empty = from the kind and the file names
  int rows = 500;            // rows per table (-1: all)
  int columns = 1000;        // overview columns per track
  int max_tracks = 48;       // overview tracks
  int memory_points = 2000;  // points per memory curve (each bucket keeps its min and max)
};

// One trace: `report` is what ReportJson is given (its rows are replaced by HtmlOptions::rows;
// set perf for the roofline, idle-time and critical-path sections). Throws std::invalid_argument
// as ReportJson does for an unusable device spec.
std::string TraceHtml(const Trace& trace, const ReportOptions& report,
                      const HtmlOptions& options = {});
// A job: JobReportJson with its charts (ranks x steps, collective skew, stragglers).
std::string JobHtml(const JobReport& job, const HtmlOptions& options = {});
// A diff of two traces (`a` the baseline) or two jobs: what moved.
std::string TraceDiffHtml(const Trace& a, const Trace& b, std::string_view name_a,
                          std::string_view name_b, const HtmlOptions& options = {});
std::string JobDiffHtml(const JobReport& a, const JobReport& b, std::string_view name_a,
                        std::string_view name_b, const HtmlOptions& options = {});
// A check's verdict, metrics per step, and the diff it carries.
std::string CheckHtml(const CheckResult& result, const HtmlOptions& options = {});

// The page around a document: `kind` is "trace", "job", "diff", "job_diff" or "check", and
// `document_json` an object as the functions above build ({"kind", "title", "rows", "report" or
// "diff" or "check", "charts"}).
std::string HtmlPage(std::string_view title, std::string_view document_json);

// Writes the page; an IoError names the path.
Status WriteHtmlReport(const std::string& path, std::string_view html);

// Which engine draws the x-y charts: "uplot" when the build bundled it, else "canvas" (the
// report's own drawing code, when npm could not install it at build time).
std::string_view HtmlChartEngine();

}  // namespace opscope

#endif  // OPSCOPE_HTML_REPORT_H_
