// opscope._opscope: the extension module behind `import opscope`
// (python/opscope/__init__.py).
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"

PYBIND11_MODULE(_opscope, m) {
  m.doc() = "opscope's C++ library; use the `opscope` package, which wraps it";
  opscope::python::BindTrace(m);
  opscope::python::BindTensor(m);
  opscope::python::BindProfiler(m);
  opscope::python::BindJob(m);
}
