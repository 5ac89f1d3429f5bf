// Whole jobs and the Explorer for Python: opscope.load(dir) for a job (job.h)
// with its tables as the JSON `opscope report DIR --json` prints
// (python/opscope/_job.py makes the DataFrames), and opscope.explore() serving
// the Explorer in-process (explorer.h). Imports and the server's start run
// without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace opscope::python {

namespace {

struct LoadedJob {
  JobReport report;
  JobOptions options;
};

std::shared_ptr<LoadedJob> LoadJob(const std::vector<std::string>& paths, bool align_clocks,
                                   int rows) {
  auto job = std::make_shared<LoadedJob>();
  job->options.align_clocks = align_clocks;
  job->options.rows = rows;
  std::vector<RankFile> files;
  Status found;
  {
    py::gil_scoped_release release;
    found = FindRankFiles(paths, &files);
    if (found.ok()) {
      job->report = AnalyzeJob(LoadRankSummaries(files), job->options);
    }
  }
  if (!found.ok()) RaiseTraceError(found, py::none());
  if (!job->report.error.empty()) {
    RaiseTraceError(Status::InvalidInput(job->report.error, 0, job->report.error_file), py::none());
  }
  return job;
}

// The Explorer serving on loopback from this process. Stop() is idempotent; the
// destructor stops it too.
class ExplorerServer {
 public:
  ExplorerServer(const std::vector<std::string>& paths, int port) {
    ExplorerOptions options;
    options.port = port;
    options.compare = paths.size() > 1;
    explorer_ = std::make_unique<Explorer>(options);
    for (const std::string& path : paths) {
      Trace trace;
      Status status;
      {
        py::gil_scoped_release release;
        status = ImportTrace(path, &trace);
      }
      if (!status.ok()) RaiseTraceError(status, py::none());
      py::gil_scoped_release release;
      explorer_->AddTrace(path.substr(path.find_last_of('/') + 1), std::move(trace), path);
    }
    Status started;
    {
      py::gil_scoped_release release;
      started = explorer_->Start();
    }
    if (!started.ok()) throw std::runtime_error("opscope.explore: " + started.message());
  }

  std::string Url() const { return explorer_ ? explorer_->Url() : ""; }
  int Port() const { return explorer_ ? explorer_->port() : 0; }
  void Stop() {
    if (!explorer_) return;
    py::gil_scoped_release release;
    explorer_->Stop();
    explorer_.reset();
  }
  bool running() const { return explorer_ != nullptr; }

 private:
  std::unique_ptr<Explorer> explorer_;
};

}  // namespace

void BindJob(py::module_& m) {
  py::class_<LoadedJob, std::shared_ptr<LoadedJob>>(m, "Job")
      // Immutable once loaded: the documents are written without the GIL.
      .def(
          "report_json", [](const LoadedJob& j) { return JobReportJson(j.report); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "report", [](const LoadedJob& j) { return FormatJobReport(j.report, j.options); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "diff_json",
          [](const LoadedJob& a, const LoadedJob& b) { return JobDiffJson(a.report, b.report); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "diff_text",
          [](const LoadedJob& a, const LoadedJob& b, int rows) {
            return FormatJobDiff(a.report, b.report, rows);
          },
          py::call_guard<py::gil_scoped_release>());
  m.def("load_job", &LoadJob, py::arg("paths"), py::arg("align_clocks") = true,
        py::arg("rows") = 20,
        "Reads one trace per rank (files or folders) as one job; raises "
        "opscope.TraceError.");

  py::class_<ExplorerServer>(m, "ExplorerServer")
      .def(py::init<const std::vector<std::string>&, int>(), py::arg("paths"), py::arg("port"))
      .def_property_readonly("url", &ExplorerServer::Url)
      .def_property_readonly("port", &ExplorerServer::Port)
      .def_property_readonly("running", &ExplorerServer::running)
      .def("stop", &ExplorerServer::Stop);
}

}  // namespace opscope::python
