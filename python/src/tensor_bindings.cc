// The tensor runtime for Python: opscope.Tensor with torch's spelling
// (operators, .to(), mean, rsqrt, ...), the factories, the ops, and numpy
// conversion. Every call goes through the same dispatcher as in C++, so the
// profiler records the same ATen ops. Errors: TensorError is RuntimeError (as
// PyTorch raises), OutOfMemoryError is opscope.OutOfMemoryError.
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/device.h"
#include "opscope/neuron.h"
#include "opscope/tensor.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace opscope::python {

namespace {

using Dims = std::vector<int64_t>;

// torch's `dim` argument: None (all dims), an int, or a sequence of ints.
Dims DimsArg(const py::object& dim) {
  if (dim.is_none()) return {};
  if (py::isinstance<py::int_>(dim)) return {dim.cast<int64_t>()};
  return dim.cast<Dims>();
}

// torch's `*size` factories: randn(2, 3), randn((2, 3)) and randn([2, 3]) are
// the same.
Dims SizeArg(const py::args& size) {
  if (size.size() == 1 && !py::isinstance<py::int_>(size[0])) return size[0].cast<Dims>();
  return size.cast<Dims>();
}

Device DeviceArg(const py::object& device) {
  return device.is_none() ? Device() : Device(device.cast<std::string>());
}

py::array_t<float> ToNumpy(const Tensor& t) {
  std::vector<float> values;
  {
    py::gil_scoped_release release;  // may wait for the device
    values = t.ToVector();
  }
  py::array_t<float> out(t.sizes());
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

Tensor FromNumpy(py::array_t<float, py::array::c_style | py::array::forcecast> array,
                 const py::object& device) {
  Dims shape(array.shape(), array.shape() + array.ndim());
  return from_vector(std::span<const float>(array.data(), static_cast<size_t>(array.size())), shape,
                     DeviceArg(device));
}

Tensor Mean(const Tensor& t, const py::object& dim, bool keepdim) {
  return mean(t, DimsArg(dim), keepdim);
}

void BindTensorClass(py::module_& m) {
  py::class_<Tensor> tensor(m, "Tensor");
  tensor
      .def_property_readonly("shape",
                             [](const Tensor& t) { return py::tuple(py::cast(t.sizes())); })
      .def(
          "size",
          [](const Tensor& t, const py::object& dim) -> py::object {
            if (dim.is_none()) return py::tuple(py::cast(t.sizes()));
            return py::int_(t.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t) { return py::tuple(py::cast(t.strides())); })
      .def("dim", &Tensor::dim)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def_property_readonly("device", [](const Tensor& t) { return t.device().str(); })
      .def_property_readonly("dtype",
                             [](const Tensor& t) { return std::string(DTypeName(t.dtype())); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("item", &Tensor::item, py::call_guard<py::gil_scoped_release>())
      .def("numpy", &ToNumpy)
      .def("tolist", [](const Tensor& t) { return ToNumpy(t).attr("tolist")(); })
      .def("__repr__", &Tensor::ToString)
      .def("__len__", [](const Tensor& t) { return t.dim() == 0 ? 0 : t.size(0); })
      .def("view", [](const Tensor& t, const py::args& s) { return t.view(SizeArg(s)); })
      .def("reshape", [](const Tensor& t, const py::args& s) { return t.reshape(SizeArg(s)); })
      .def("expand", [](const Tensor& t, const py::args& s) { return t.expand(SizeArg(s)); })
      .def("permute", [](const Tensor& t, const py::args& s) { return t.permute(SizeArg(s)); })
      .def("transpose", &Tensor::transpose)
      .def("t", &Tensor::t)
      .def("unsqueeze", &Tensor::unsqueeze)
      .def("narrow", &Tensor::narrow)
      .def("contiguous", &Tensor::contiguous)
      .def(
          "to",
          [](const Tensor& t, const std::string& target) {
            if (target == "float" || target == "float32") return t.to(DType::kFloat32);
            if (target == "bfloat16") return t.to(DType::kBFloat16);
            return t.to(Device(target));
          },
          py::arg("device"))
      .def("cpu", [](const Tensor& t) { return t.to(Device()); })
      .def("copy_", [](Tensor& t, const Tensor& src) { return t.copy_(src); })
      .def("mean", &Mean, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "sum",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return sum(t, DimsArg(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "amax",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return amax(t, DimsArg(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("rsqrt", [](const Tensor& t) { return rsqrt(t); })
      .def("sqrt", [](const Tensor& t) { return sqrt(t); })
      .def("exp", [](const Tensor& t) { return exp(t); })
      .def("pow", [](const Tensor& t, double e) { return pow(t, e); })
      .def("__pow__", [](const Tensor& t, double e) { return pow(t, e); })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); })
      .def("__neg__", [](const Tensor& a) { return -a; })
      .def("__add__", [](const Tensor& a, const Tensor& b) { return a + b; })
      .def("__add__", [](const Tensor& a, double b) { return a + b; })
      .def("__radd__", [](const Tensor& a, double b) { return b + a; })
      .def("__sub__", [](const Tensor& a, const Tensor& b) { return a - b; })
      .def("__sub__", [](const Tensor& a, double b) { return a - b; })
      .def("__rsub__", [](const Tensor& a, double b) { return add(neg(a), b); })
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return a * b; })
      .def("__mul__", [](const Tensor& a, double b) { return a * b; })
      .def("__rmul__", [](const Tensor& a, double b) { return b * a; })
      .def("__truediv__", [](const Tensor& a, const Tensor& b) { return a / b; })
      .def("__truediv__", [](const Tensor& a, double b) { return a / b; })
      .def("__rtruediv__", [](const Tensor& a, double b) { return mul(reciprocal(a), b); });
}

void BindFactories(py::module_& m) {
  m.def(
      "randn",
      [](const py::args& size, uint64_t seed, const py::object& device) {
        return randn(SizeArg(size), seed, DeviceArg(device));
      },
      py::kw_only(), py::arg("seed") = 0, py::arg("device") = py::none());
  m.def(
      "ones",
      [](const py::args& size, const py::object& device) {
        return ones(SizeArg(size), DeviceArg(device));
      },
      py::kw_only(), py::arg("device") = py::none());
  m.def(
      "zeros",
      [](const py::args& size, const py::object& device) {
        return zeros(SizeArg(size), DeviceArg(device));
      },
      py::kw_only(), py::arg("device") = py::none());
  m.def(
      "empty",
      [](const py::args& size, const py::object& device) {
        return empty(SizeArg(size), DeviceArg(device));
      },
      py::kw_only(), py::arg("device") = py::none());
  m.def(
      "full",
      [](const py::object& size, double value, const py::object& device) {
        return full(size.cast<Dims>(), value, DeviceArg(device));
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("device") = py::none());
  m.def(
      "arange",
      [](double start, double end, double step, const py::object& device) {
        return arange(start, end, step, DeviceArg(device));
      },
      py::arg("start"), py::arg("end"), py::arg("step") = 1, py::kw_only(),
      py::arg("device") = py::none());
  m.def("tensor", &FromNumpy, py::arg("data"), py::kw_only(), py::arg("device") = py::none(),
        "A float32 tensor holding a copy of `data` (a numpy array or nested "
        "lists).");
}

void BindOps(py::module_& m) {
  m.def(
      "add", [](const Tensor& a, const Tensor& b, double alpha) { return add(a, b, alpha); },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def(
      "add", [](const Tensor& a, double b, double alpha) { return add(a, b, alpha); },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def(
      "sub", [](const Tensor& a, const Tensor& b, double alpha) { return sub(a, b, alpha); },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def("mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); });
  m.def("mul", [](const Tensor& a, double b) { return mul(a, b); });
  m.def("div", [](const Tensor& a, const Tensor& b) { return div(a, b); });
  m.def("div", [](const Tensor& a, double b) { return div(a, b); });
  m.def("pow", [](const Tensor& a, double e) { return pow(a, e); });
  m.def("maximum", &maximum);
  m.def("minimum", &minimum);
  for (auto [name, fn] : {std::pair{"rsqrt", &rsqrt},
                          {"sqrt", &sqrt},
                          {"exp", &exp},
                          {"neg", &neg},
                          {"log", &log},
                          {"abs", &abs},
                          {"reciprocal", &reciprocal},
                          {"relu", &relu},
                          {"tanh", &tanh},
                          {"sigmoid", &sigmoid},
                          {"silu", &silu}}) {
    m.def(name, fn, py::arg("input"));
  }
  m.def(
      "gelu", [](const Tensor& a, const std::string& approximate) { return gelu(a, approximate); },
      py::arg("input"), py::arg("approximate") = "none");
  m.def("mean", &Mean, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "sum",
      [](const Tensor& t, const py::object& dim, bool keepdim) {
        return sum(t, DimsArg(dim), keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "amax",
      [](const Tensor& t, const py::object& dim, bool keepdim) {
        return amax(t, DimsArg(dim), keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def(
      "amin",
      [](const Tensor& t, const py::object& dim, bool keepdim) {
        return amin(t, DimsArg(dim), keepdim);
      },
      py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("mm", &mm);
  m.def("bmm", &bmm);
  m.def("matmul", &matmul);
  m.def("softmax", &softmax, py::arg("input"), py::arg("dim"));
  m.def(
      "layer_norm",
      [](const Tensor& x, const Dims& shape, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, double eps) {
        return layer_norm(x, shape, weight.value_or(Tensor()), bias.value_or(Tensor()), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
  // torch.rms_norm: eps None = the dtype's machine epsilon
  // (torch.finfo(torch.float32).eps).
  m.def(
      "rms_norm",
      [](const Tensor& x, const py::object& shape, const std::optional<Tensor>& weight,
         std::optional<double> eps) {
        return rms_norm(x, DimsArg(shape), weight.value_or(Tensor()),
                        eps.value_or(1.1920928955078125e-07));
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("eps") = py::none());
  m.def(
      "synchronize", [](const std::string& device) { synchronize(Device(device)); },
      py::arg("device"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "neuron_synchronize", [] { neuron::synchronize(); }, py::call_guard<py::gil_scoped_release>(),
      "torch.neuron.synchronize(): waits for all work on the simulated "
      "NeuronCores.");
  m.def("neuron_device_count", [] { return GetBackend(DeviceType::kPrivateUse1).device_count(); });
  m.def("supported_ops", [] {
    std::vector<std::string> out;
    for (std::string_view name : SupportedOps()) out.emplace_back(name);
    return out;
  });
}

}  // namespace

void BindTensor(py::module_& m) {
  RegisterCpuBackend();
  RegisterNeuronBackend();
  py::register_exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError);
  py::register_exception<TensorError>(m, "TensorError", PyExc_RuntimeError);
  BindTensorClass(m);
  BindFactories(m);
  BindOps(m);
}

}  // namespace opscope::python
