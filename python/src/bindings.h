// The pieces of the extension module opscope._opscope, one function per area. Each adds its
// classes and functions to the module; python/opscope/*.py wraps them into the public API.
#ifndef OPSCOPE_PYTHON_BINDINGS_H_
#define OPSCOPE_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include "opscope/status.h"

namespace opscope::python {

// Trace import and analysis (analysis.h, key_averages.h): load, Trace, KeyAverages, diff.
void BindTrace(pybind11::module_& m);
// The tensor runtime (tensor.h, device.h, neuron.h): Tensor, factories, ops; registers the cpu
// and neuron backends.
void BindTensor(pybind11::module_& m);
// Profiler sessions (profiler.h, device_config.h), record_function, compile() (compile.h).
void BindProfiler(pybind11::module_& m);
// Jobs (job.h) and the in-process Explorer (explorer.h).
void BindJob(pybind11::module_& m);

// Raises opscope.TraceError(message, file, offset, code) for a failed Status; `partial` (may be
// None) is attached as the exception's `trace`: what was read before the error.
[[noreturn]] void RaiseTraceError(const Status& status, pybind11::object partial);

}  // namespace opscope::python

#endif  // OPSCOPE_PYTHON_BINDINGS_H_
