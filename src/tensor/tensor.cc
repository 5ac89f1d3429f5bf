// Storage and the Tensor handle: accessors, host reads and printing.
#include "opscope/tensor.h"

#include <fmt/format.h>

#include <cstring>

#include "opscope/device.h"
#include "tensor/dispatch.h"
#include "tensor/shape.h"

namespace opscope {

Storage::Storage(Device device, size_t nbytes) : nbytes_(nbytes), device_(device) {
  backend_ = &GetBackend(device.type);
  if (device.index < 0 || device.index >= backend_->device_count()) {
    throw TensorError(fmt::format("Invalid device {}: the {} backend has {} device(s)",
                                  device.str(), backend_->name(), backend_->device_count()));
  }
  data_ = backend_->Allocate(device.index, nbytes);
}

Storage::~Storage() {
  if (data_ != nullptr) backend_->Free(device_.index, data_, nbytes_);
}

Tensor::Tensor(std::shared_ptr<Storage> storage, std::vector<int64_t> sizes,
               std::vector<int64_t> strides, int64_t storage_offset, DType dtype)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(storage_offset),
      dtype_(dtype) {
  if (sizes_.size() != strides_.size()) {
    throw TensorError(fmt::format("mismatch in length of strides and shape ({} vs {})",
                                  strides_.size(), sizes_.size()));
  }
  if (sizes_.size() > static_cast<size_t>(kMaxDims)) {
    throw TensorError(fmt::format("tensors have at most {} dims, got {}", kMaxDims, sizes_.size()));
  }
}

int64_t Tensor::size(int64_t dim) const { return sizes_.at(NormalizeDim(dim, this->dim())); }
int64_t Tensor::stride(int64_t dim) const { return strides_.at(NormalizeDim(dim, this->dim())); }
int64_t Tensor::numel() const { return ShapeNumel(sizes_); }

Device Tensor::device() const {
  if (!storage_) throw TensorError("device() called on an undefined tensor");
  return storage_->device();
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (sizes_[i] == 0) return true;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

void* DataPointerChecked(const Tensor& t, size_t element_size) {
  if (!t.defined()) throw TensorError("data() called on an undefined tensor");
  if (t.device().type != DeviceType::kCPU) {
    throw TensorError(
        fmt::format("data() needs a cpu tensor but this one is on {}; call .to(\"cpu\") first",
                    t.device().str()));
  }
  if (element_size != ElementSize(t.dtype())) {
    throw TensorError(fmt::format("data<T>(): T has {} bytes but the tensor's dtype {} has {}",
                                  element_size, DTypeName(t.dtype()), ElementSize(t.dtype())));
  }
  return static_cast<char*>(t.storage()->data()) +
         t.storage_offset() * static_cast<int64_t>(element_size);
}

std::vector<float> Tensor::ToVector() const {
  if (!defined()) throw TensorError("ToVector() called on an undefined tensor");
  if (device().type == DeviceType::kMeta) {
    throw TensorError("Cannot copy out of meta tensor; no data!");
  }
  Tensor host = AllocateTensor(sizes_, Device(), DType::kFloat32);
  CopyInto(host, *this);
  const float* p = host.data<float>();
  return std::vector<float>(p, p + host.numel());
}

namespace {

void FormatDim(const std::vector<float>& v, const Shape& shape, size_t dim, int64_t base,
               const Shape& strides, std::string& out) {
  constexpr int64_t kEdge = 3;  // elements shown at each end of a long dimension
  if (dim == shape.size()) {
    out += fmt::format("{:.4f}", v[base]);
    return;
  }
  out += '[';
  const int64_t n = shape[dim];
  for (int64_t i = 0; i < n; ++i) {
    if (n > 2 * kEdge && i == kEdge) {
      out += "..., ";
      i = n - kEdge - 1;
      continue;
    }
    FormatDim(v, shape, dim + 1, base + i * strides[dim], strides, out);
    if (i + 1 < n) out += ", ";
  }
  out += ']';
}

}  // namespace

std::string Tensor::ToString() const {
  if (!defined()) return "tensor(undefined)";
  std::string out = "tensor(";
  if (device().type == DeviceType::kMeta) {
    out += fmt::format("..., size={}", ShapeToString(sizes_));
  } else {
    const std::vector<float> v = ToVector();
    FormatDim(v, sizes_, 0, 0, ContiguousStrides(sizes_), out);
  }
  if (device().type != DeviceType::kCPU) out += fmt::format(", device='{}'", device().str());
  if (dtype_ != DType::kFloat32) out += ", dtype=torch.bfloat16";
  out += ')';
  return out;
}

}  // namespace opscope
