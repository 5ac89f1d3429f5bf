// Trace import and analysis for Python: opscope.load(), Trace's analyses as the JSON documents
// `opscope report --json` prints (python/opscope/_frames.py turns them into DataFrames, so the
// columns carry the same names), key_averages' table as the CLI prints it, and the slices as
// numpy columns filled without a Python object per event.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/check.h"
#include "opscope/import.h"
#include "opscope/key_averages.h"
#include "opscope/overview.h"
#include "opscope/trace.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace opscope::python {

namespace {

// One imported trace and how its import went. Immutable once built, so the analyses may run
// with the GIL released.
struct LoadedTrace {
  Trace trace;
  ImportStats stats;
  std::string path;
};
using TraceHandle = std::shared_ptr<LoadedTrace>;

std::shared_ptr<LoadedTrace> Load(const std::string& path) {
  auto loaded = std::make_shared<LoadedTrace>();
  loaded->path = path;
  Status status;
  {
    py::gil_scoped_release release;
    status = ImportTrace(path, &loaded->trace, &loaded->stats);
  }
  if (!status.ok()) RaiseTraceError(status, py::cast(TraceHandle(loaded)));
  return loaded;
}

std::shared_ptr<LoadedTrace> LoadBytes(py::bytes data) {
  auto loaded = std::make_shared<LoadedTrace>();
  std::string_view view = data;  // the bytes object stays alive (and immutable) during the call
  Status status;
  {
    py::gil_scoped_release release;
    status = ImportTraceFromMemory(view, &loaded->trace, &loaded->stats);
  }
  if (!status.ok()) RaiseTraceError(status, py::cast(TraceHandle(loaded)));
  return loaded;
}

// Text from a trace or an error message as a Python str. The importer keeps only valid UTF-8 in
// names, but messages quote the input where it went wrong: bytes that are not UTF-8 show as
// \xNN escapes rather than failing the conversion.
py::str Text(std::string_view text) {
  PyObject* s =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::list Texts(const std::vector<std::string>& texts) {
  py::list out;
  for (const std::string& t : texts) out.append(Text(t));
  return out;
}

// Runs `fn` over the trace with the GIL released and returns its string result as a str.
template <typename Fn>
py::str Released(Fn&& fn) {
  std::string out;
  {
    py::gil_scoped_release release;
    out = fn();
  }
  return Text(out);
}

// A numpy array of `n` elements of T and where to write them (filled without the GIL).
template <typename T>
struct Column {
  explicit Column(size_t n) : array(static_cast<py::ssize_t>(n)), data(array.mutable_data()) {}
  py::array_t<T> array;
  T* data;
};

// Interned-string columns as categorical codes: code per slice, and the texts the codes index.
// Codes are dense over the ids actually used, so the categories stay small.
struct CodeColumn {
  std::vector<int32_t> code_of_id;
  std::vector<StringId> ids;  // category i is ids[i]
  int32_t Code(StringId id) {
    if (code_of_id[id] < 0) {
      code_of_id[id] = static_cast<int32_t>(ids.size());
      ids.push_back(id);
    }
    return code_of_id[id];
  }
};

py::list Categories(const Trace& trace, const CodeColumn& column) {
  py::list out;
  for (StringId id : column.ids) out.append(Text(trace.Str(id)));
  return out;
}

// The slices as columns: numeric ones as numpy arrays; name, category, input_shapes as int32
// codes with their category lists. Indices that are kNone (no parent, no args) become -1.
py::dict SliceColumns(const LoadedTrace& loaded) {
  const Trace& trace = loaded.trace;
  const std::vector<Slice>& slices = trace.slices();
  const size_t n = slices.size();
  Column<int64_t> ts(n), dur(n), ext(n), corr(n), parent(n), args(n);
  Column<int32_t> name(n), category(n), shapes(n), track(n), lane(n);
  Column<int8_t> kind(n);
  Column<int16_t> depth(n);
  const size_t strings = trace.strings().size();
  CodeColumn names{std::vector<int32_t>(strings, -1), {}};
  CodeColumn categories{std::vector<int32_t>(strings, -1), {}};
  CodeColumn input_shapes{std::vector<int32_t>(strings, -1), {}};
  {
    py::gil_scoped_release release;
    auto index = [](uint32_t i) { return i == kNone ? int64_t{-1} : int64_t{i}; };
    // One pass: each 64-byte slice is read once for all columns.
    for (size_t i = 0; i < n; ++i) {
      const Slice& s = slices[i];
      ts.data[i] = s.ts_ns;
      dur.data[i] = s.dur_ns;
      ext.data[i] = s.external_id;
      corr.data[i] = s.correlation;
      parent.data[i] = index(s.parent);
      args.data[i] = index(s.args);
      name.data[i] = names.Code(s.name);
      category.data[i] = categories.Code(s.category);
      shapes.data[i] = input_shapes.Code(s.input_shapes);
      track.data[i] = s.track == kNone ? -1 : static_cast<int32_t>(s.track);
      kind.data[i] = static_cast<int8_t>(s.kind);
      depth.data[i] = s.depth;
      lane.data[i] = s.lane;
    }
  }
  py::list kinds;
  for (int k = 0; k <= static_cast<int>(ActivityKind::kOther); ++k) {
    kinds.append(py::str(std::string(ActivityKindName(static_cast<ActivityKind>(k)))));
  }
  py::dict out;
  out["ts_ns"] = ts.array;
  out["dur_ns"] = dur.array;
  out["name"] = py::make_tuple(name.array, Categories(trace, names));
  out["category"] = py::make_tuple(category.array, Categories(trace, categories));
  out["kind"] = py::make_tuple(kind.array, kinds);
  out["track"] = track.array;
  out["external_id"] = ext.array;
  out["correlation"] = corr.array;
  out["parent"] = parent.array;
  out["depth"] = depth.array;
  out["lane"] = lane.array;
  out["input_shapes"] = py::make_tuple(shapes.array, Categories(trace, input_shapes));
  out["args"] = args.array;
  return out;
}

// Processes and tracks as column lists (small: one entry per track).
py::dict TrackColumns(const Trace& trace) {
  py::list pid, process_name, tid, name, kind, is_device;
  static const char* kKinds[] = {"thread", "device_stream", "device_engine", "counter"};
  for (const Track& t : trace.tracks()) {
    const Process* p = t.process == kNone ? nullptr : &trace.processes()[t.process];
    pid.append(p ? py::int_(p->pid) : py::int_(-1));
    process_name.append(Text(p ? trace.Str(p->name) : std::string_view()));
    is_device.append(p ? p->is_device : false);
    tid.append(t.tid);
    name.append(Text(trace.Str(t.name)));
    kind.append(kKinds[static_cast<int>(t.kind)]);
  }
  py::dict out;
  out["pid"] = pid;
  out["process_name"] = process_name;
  out["is_device"] = is_device;
  out["tid"] = tid;
  out["name"] = name;
  out["kind"] = kind;
  return out;
}

py::dict Metadata(const LoadedTrace& loaded) {
  const TraceMetadata& md = loaded.trace.metadata();
  py::dict out;
  out["path"] = Text(loaded.path);
  out["format"] = Text(TraceFormatName(loaded.stats.format));
  out["trace_name"] = Text(md.trace_name);
  out["device_type"] = Text(md.device_type);
  out["base_time_ns"] = md.base_time_ns;
  out["schema_version"] = md.schema_version;
  out["skipped_events"] = md.skipped_events;
  out["warnings"] = Texts(md.warnings);
  py::dict dropped;
  for (const auto& [reason, count] : md.dropped) dropped[Text(reason)] = count;
  out["dropped"] = dropped;
  py::dict extra;
  for (const auto& [key, json] : md.extra) extra[Text(key)] = Text(json);
  out["extra"] = extra;
  out["slices"] = loaded.trace.slices().size();
  out["format"] = Text(TraceFormatName(loaded.stats.format));
  out["input_bytes"] = loaded.stats.input_bytes;
  out["json_bytes"] = loaded.stats.json_bytes;
  // Where the import's wall time went (ImportStats' stages), for timing an import from a notebook.
  py::dict seconds;
  seconds["read"] = loaded.stats.read_seconds;
  seconds["parse"] = loaded.stats.parse_seconds;
  seconds["merge"] = loaded.stats.merge_seconds;
  seconds["finish"] = loaded.stats.finish_seconds;
  out["import_seconds"] = seconds;
  return out;
}

void BindKeyAverages(py::module_& m) {
  py::class_<KeyAverages>(m, "KeyAverages")
      .def(
          "table",
          [](const KeyAverages& k, const std::string& sort_by, int row_limit) {
            return Released([&] { return k.Table(sort_by, row_limit); });
          },
          py::arg("sort_by") = "", py::arg("row_limit") = 100)
      .def(
          "to_json",
          [](const KeyAverages& k, const std::string& sort_by, int row_limit) {
            return Released([&] { return k.ToJson(sort_by, row_limit); });
          },
          py::arg("sort_by") = "", py::arg("row_limit") = -1)
      .def_property_readonly("device_name", &KeyAverages::device_name)
      .def_property_readonly("grouped_by_input_shape", &KeyAverages::grouped_by_input_shape)
      .def_property_readonly("dropped_events", &KeyAverages::dropped_events)
      .def_property_readonly("unmatched_device_activity", &KeyAverages::unmatched_device_activity)
      .def("__len__", [](const KeyAverages& k) { return k.rows().size(); });
}

}  // namespace

void RaiseTraceError(const Status& status, py::object partial) {
  py::object cls = py::module_::import("opscope._errors").attr("TraceError");
  py::object exc = cls(Text(status.message()), Text(status.file()), status.offset(),
                       Text(ToString(status.code())), partial);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

void BindTrace(py::module_& m) {
  BindKeyAverages(m);
  py::class_<LoadedTrace, std::shared_ptr<LoadedTrace>>(m, "Trace")
      .def(
          "key_averages",
          [](const LoadedTrace& t, bool group_by_input_shape) {
            py::gil_scoped_release release;
            return KeyAverages::FromTrace(t.trace, {.group_by_input_shape = group_by_input_shape});
          },
          py::arg("group_by_input_shape") = false)
      .def("timeline_json",
           [](const LoadedTrace& t) {
             return Released([&] { return ComputeDeviceTimeline(t.trace).ToJson(); });
           })
      .def("ops_json",
           [](const LoadedTrace& t) {
             return Released([&] { return ComputeOpSummary(t.trace).ToJson(); });
           })
      .def("kernels_json",
           [](const LoadedTrace& t) {
             return Released([&] { return ComputeKernelSummary(t.trace).ToJson(); });
           })
      .def("launch_stats_json",
           [](const LoadedTrace& t) {
             return Released([&] { return ComputeLaunchStatistics(t.trace).ToJson(); });
           })
      .def(
          "report",
          [](const LoadedTrace& t, const std::string& sort_by, int rows) {
            return Released([&] { return FormatReport(t.trace, {sort_by, rows, t.path}); });
          },
          py::arg("sort_by") = "", py::arg("rows") = 20)
      .def(
          "report_json",
          [](const LoadedTrace& t, const std::string& sort_by, int rows) {
            return Released([&] { return ReportJson(t.trace, {sort_by, rows, t.path}); });
          },
          py::arg("sort_by") = "", py::arg("rows") = 20)
      .def(
          "analysis_json",
          [](const LoadedTrace& t, const std::string& device_spec, const std::string& step,
             int step_instance) {
            // The report with every analysis (perf model, idle breakdown, critical path, memory)
            // and every row; throws ValueError (std::invalid_argument) for a bad device spec.
            return Released([&] {
              ReportOptions o{"", -1, t.path};
              o.perf = o.memory = true;
              o.device_spec = device_spec;
              o.critical_path_step = step;
              o.critical_path_instance = step_instance;
              return ReportJson(t.trace, o);
            });
          },
          py::arg("device_spec") = "", py::arg("step") = "ProfilerStep",
          py::arg("step_instance") = 0)
      .def("neuron_device_json",
           [](const LoadedTrace& t) {
             return Released([&] {
               const NeuronDeviceReport r = ComputeNeuronDevice(t.trace);
               return r.present ? r.ToJson(-1) : std::string("null");
             });
           })
      .def("device_timelines_json",
           [](const LoadedTrace& t) {
             return Released([&] {
               std::string out = "[";
               for (const DeviceTimelineOfDevice& d : ComputeDeviceTimelines(t.trace)) {
                 out += (out.size() > 1 ? "," : "") + d.ToJson();
               }
               return out + "]";
             });
           })
      .def(
          "overview_json",
          [](const LoadedTrace& t, int columns, int max_tracks) {
            return Released([&] {
              return ComputeTraceOverview(t.trace, {columns, max_tracks}).ToJson();
            });
          },
          py::arg("columns") = 1000, py::arg("max_tracks") = 48)
      .def("slice_columns", &SliceColumns)
      .def("track_columns", [](const LoadedTrace& t) { return TrackColumns(t.trace); })
      .def("metadata", &Metadata)
      .def("__len__", [](const LoadedTrace& t) { return t.trace.slices().size(); });

  m.def("load", &Load, py::arg("path"),
        "Imports a profile in any format opscope reads (Kineto / Chrome JSON, XPlane, Nsight "
        "Systems SQLite; docs/formats.md); raises opscope.TraceError.");
  m.def(
      "find_traces",
      [](const std::string& path) {
        std::vector<std::string> traces;
        const Status st = FindTraces(path, &traces);
        if (!st.ok()) throw std::invalid_argument(st.message());
        return traces;
      },
      py::arg("path"), "The profiles a file or folder holds, as a folder scan finds them.");
  m.def(
      "trace_parts",
      [](const std::string& path) {
        std::vector<std::string> parts;
        Status st;
        {
          py::gil_scoped_release release;
          st = ListTraceParts(path, &parts);
        }
        return st.ok() ? parts : std::vector<std::string>();  // its import says what is wrong
      },
      py::arg("path"),
      "The ranks one profile holds (the hosts of a Neuron system profile), else an empty list.");
  m.def("load_bytes", &LoadBytes, py::arg("data"), "The same from bytes in memory.");
  m.def(
      "diff_json",
      [](const LoadedTrace& a, const LoadedTrace& b) {
        return Released([&] { return DiffTraces(a.trace, b.trace).ToJson(); });
      },
      py::arg("a"), py::arg("b"));
  m.def(
      "check_json",
      [](const LoadedTrace& a, const LoadedTrace& b, double max_regression,
         const std::vector<std::string>& metrics, int min_steps, int skip_steps, double alpha,
         int rows) {
        CheckOptions o;
        o.max_regression_pct = max_regression;
        o.min_steps = min_steps;
        o.skip_steps = skip_steps;
        o.alpha = alpha;
        o.rows = rows;
        for (const std::string& spec : metrics) {
          CheckMetric metric;
          const Status st = CheckMetric::Parse(spec, &metric);
          if (!st.ok()) throw std::invalid_argument(st.message());
          o.metrics.push_back(std::move(metric));
        }
        return Released([&] {
          CheckResult r = CheckTraces(a.trace, b.trace, o);
          r.baseline = a.path;
          r.candidate = b.path;
          return r.ToJson();
        });
      },
      py::arg("a"), py::arg("b"), py::arg("max_regression") = 5.0,
      py::arg("metrics") = std::vector<std::string>{}, py::arg("min_steps") = 1,
      py::arg("skip_steps") = 0, py::arg("alpha") = 0.05, py::arg("rows") = 20);
  m.def(
      "diff_text",
      [](const LoadedTrace& a, const LoadedTrace& b, int rows) {
        return Released([&] { return DiffTraces(a.trace, b.trace).ToText(rows); });
      },
      py::arg("a"), py::arg("b"), py::arg("rows") = 30);
}

}  // namespace opscope::python
