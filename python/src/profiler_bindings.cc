// The profiler session and compile() for Python: python/opscope/profiler.py
// gives them torch.profiler's spelling (profile, schedule, record_function,
// NeuronConfig). Python callables (on_trace_ready, the function compile()
// captures) are called with the GIL taken again; the long calls (step, stop,
// export, compiled calls) release it.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opscope/compile.h"
#include "opscope/profiler.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace opscope::python {

namespace {

// A Python object owned from C++ code that may drop it without the GIL.
std::shared_ptr<py::object> Hold(py::object object) {
  return std::shared_ptr<py::object>(new py::object(std::move(object)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

// record_function(name) as a context manager: the range opens on __enter__ and
// closes on
// __exit__, on the same thread.
class RecordRange {
 public:
  explicit RecordRange(std::string name) : name_(std::move(name)) {}
  void Enter() { fn_.emplace(name_); }
  void Exit() { fn_.reset(); }

 private:
  std::string name_;
  std::optional<RecordFunction> fn_;
};

std::unique_ptr<Profiler> NewProfiler(const std::vector<ProfilerActivity>& activities,
                                      bool record_shapes, std::optional<Schedule> schedule,
                                      const py::object& on_trace_ready,
                                      std::optional<DeviceConfig> device, bool profile_memory) {
  ProfilerOptions options;
  options.activities = activities;
  options.record_shapes = record_shapes;
  options.profile_memory = profile_memory;
  options.schedule = schedule;
  if (device) options.device = *device;
  if (!on_trace_ready.is_none()) {
    auto callback = Hold(on_trace_ready);
    options.on_trace_ready = [callback](Profiler&) {
      py::gil_scoped_acquire gil;
      (*callback)();
    };
  }
  return std::make_unique<Profiler>(std::move(options));
}

void BindSession(py::module_& m) {
  py::register_exception<ProfilerError>(m, "ProfilerError", PyExc_RuntimeError);
  py::enum_<ProfilerActivity>(m, "ProfilerActivity")
      .value("CPU", ProfilerActivity::kCPU)
      .value("PrivateUse1", ProfilerActivity::kPrivateUse1);
  py::enum_<ProfileMode>(m, "ProfileMode")
      .value("DEVICE", ProfileMode::kDevice)
      .value("RUNTIME", ProfileMode::kRuntime)
      .value("CPU_UTIL", ProfileMode::kCpuUtil)
      .value("HOST_MEMORY", ProfileMode::kHostMemory);
  py::class_<Schedule>(m, "Schedule")
      .def(py::init([](int wait, int warmup, int active, int repeat, int skip_first) {
             return Schedule{skip_first, wait, warmup, active, repeat};
           }),
           py::kw_only(), py::arg("wait"), py::arg("warmup"), py::arg("active"),
           py::arg("repeat") = 0, py::arg("skip_first") = 0)
      .def_readonly("wait", &Schedule::wait)
      .def_readonly("warmup", &Schedule::warmup)
      .def_readonly("active", &Schedule::active)
      .def_readonly("repeat", &Schedule::repeat)
      .def_readonly("skip_first", &Schedule::skip_first);
  py::class_<DeviceConfig>(m, "DeviceConfig")
      .def(py::init<>())
      .def_readwrite("modes", &DeviceConfig::modes)
      .def_readwrite("profile_output_dir", &DeviceConfig::profile_output_dir)
      .def_readwrite("correlate_device_time", &DeviceConfig::correlate_device_time)
      .def_readwrite("max_events_per_nc", &DeviceConfig::max_events_per_nc)
      .def_readwrite("capture_enabled_for_nc", &DeviceConfig::capture_enabled_for_nc)
      .def_readwrite("sample_period_ms", &DeviceConfig::sample_period_ms)
      .def_readwrite("flush_device_on_stop", &DeviceConfig::flush_device_on_stop);
  py::class_<Profiler>(m, "Profiler")
      .def(py::init(&NewProfiler), py::arg("activities"), py::arg("record_shapes"),
           py::arg("schedule"), py::arg("on_trace_ready"), py::arg("device"),
           py::arg("profile_memory") = false)
      .def("start", &Profiler::Start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Profiler::Stop, py::call_guard<py::gil_scoped_release>())
      .def("step", &Profiler::step, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("running", &Profiler::running)
      .def_property_readonly("step_num", &Profiler::step_num)
      .def("key_averages", &Profiler::key_averages, py::arg("group_by_input_shape") = false,
           py::call_guard<py::gil_scoped_release>())
      .def("export_chrome_trace", &Profiler::export_chrome_trace, py::arg("path"),
           py::call_guard<py::gil_scoped_release>())
      .def("export_perfetto", &Profiler::export_perfetto, py::arg("path"),
           py::call_guard<py::gil_scoped_release>())
      .def("slice_count", [](const Profiler& p) { return p.trace().slices().size(); })
      .def_property_readonly("last_error", &Profiler::last_error);
  m.def("profile_run_directory", &ProfileRunDirectory, py::arg("dir"),
        "<dir>/<host>_pid_<pid>/<YYYYmmdd_HHMMSS>: where one run's profiles go.");
  py::class_<RecordRange>(m, "RecordRange")
      .def(py::init<std::string>())
      .def("enter", &RecordRange::Enter)
      .def("exit", &RecordRange::Exit);
}

void BindCompile(py::module_& m) {
  py::class_<CompileStats>(m, "CompileStats")
      .def_readonly("calls", &CompileStats::calls)
      .def_readonly("compiles", &CompileStats::compiles)
      .def_readonly("recompiles", &CompileStats::recompiles)
      .def_readonly("memory_hits", &CompileStats::memory_hits)
      .def_readonly("disk_hits", &CompileStats::disk_hits)
      .def_readonly("cxx_runs", &CompileStats::cxx_runs)
      .def_readonly("eager_calls", &CompileStats::eager_calls);
  py::class_<CompiledGraphInfo>(m, "CompiledGraphInfo")
      .def_readonly("region_name", &CompiledGraphInfo::region_name)
      .def_readonly("graph", &CompiledGraphInfo::graph)
      .def_readonly("fusion", &CompiledGraphInfo::fusion)
      .def_readonly("memory", &CompiledGraphInfo::memory)
      .def_readonly("source_path", &CompiledGraphInfo::source_path)
      .def_readonly("cache", &CompiledGraphInfo::cache)
      .def_readonly("fallback_reason", &CompiledGraphInfo::fallback_reason)
      .def_readonly("kernels", &CompiledGraphInfo::kernels)
      .def_readonly("extern_ops", &CompiledGraphInfo::extern_ops)
      .def_readonly("captured_ops", &CompiledGraphInfo::captured_ops);
  py::class_<CompiledFunction>(m, "CompiledFunction")
      .def("__call__",
           [](CompiledFunction& f, const std::vector<Tensor>& inputs) {
             py::gil_scoped_release release;  // capture calls back into Python with the GIL
             return f(std::span<const Tensor>(inputs));
           })
      .def_property_readonly("stats", &CompiledFunction::stats)
      .def_property_readonly("last", &CompiledFunction::last);
  // `fn` takes the inputs as positional tensors and returns a list of tensors.
  m.def(
      "compile",
      [](py::object fn, const std::string& backend, const std::string& cache_dir, bool disk_cache) {
        auto callable = Hold(std::move(fn));
        CompileFn run = [callable](std::span<const Tensor> inputs) {
          py::gil_scoped_acquire gil;
          py::tuple args(inputs.size());
          for (size_t i = 0; i < inputs.size(); ++i) args[i] = py::cast(inputs[i]);
          return (*callable)(*args).cast<std::vector<Tensor>>();
        };
        return opscope::compile(
            std::move(run), {.backend = backend, .cache_dir = cache_dir, .disk_cache = disk_cache});
      },
      py::arg("fn"), py::arg("backend"), py::arg("cache_dir") = "", py::arg("disk_cache") = true);
}

}  // namespace

void BindProfiler(py::module_& m) {
  BindSession(m);
  BindCompile(m);
}

}  // namespace opscope::python
