// PodBuffer: the growable arrays decoded columns live in.
//
// A column's arrays are written once, in order, into fresh memory, and on this project's VM a
// first touch of a 4 KiB page costs 15-30 us (base/huge_array.h): with malloc and realloc a
// 14 MB string column spent a third of its decode in page faults and another third in realloc's
// copies. So an array of kMapBytes or more lives in its own anonymous mapping advised for
// transparent huge pages (one fault per 2 MiB) and grows with mremap, which moves pages instead
// of copying bytes; smaller ones use malloc. Growth never zeroes: decoders write every element
// they append. Throws std::bad_alloc when memory runs out.
#ifndef OPSCOPE_IMPORT_PARQUET_POD_BUFFER_H_
#define OPSCOPE_IMPORT_PARQUET_POD_BUFFER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

namespace opscope::parquet {

namespace pod_memory {
inline constexpr size_t kMapBytes = size_t{1} << 20;
// Resizes the block at `p` holding `used` bytes (nullptr: none) to at least `bytes`; returns the
// new block and its capacity in *capacity. `old_capacity` says how the old block was made.
void* Resize(void* p, size_t old_capacity, size_t used, size_t bytes, size_t* capacity);
void Free(void* p, size_t capacity);
}  // namespace pod_memory

template <typename T>
class PodBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  PodBuffer() = default;
  ~PodBuffer() { pod_memory::Free(data_, capacity_ * sizeof(T)); }
  PodBuffer(PodBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  PodBuffer& operator=(PodBuffer&& o) noexcept {
    if (this != &o) {
      pod_memory::Free(data_, capacity_ * sizeof(T));
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  PodBuffer(const PodBuffer&) = delete;
  PodBuffer& operator=(const PodBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > capacity_) Reallocate(n);
  }
  // Appends n elements left for the caller to write; returns the first.
  T* Extend(size_t n) {
    if (n > capacity_ - size_) Reallocate(std::max(size_ + n, capacity_ + capacity_ / 2));
    T* first = data_ + size_;
    size_ += n;
    return first;
  }
  void push_back(const T& v) { *Extend(1) = v; }
  void resize(size_t n) {
    if (n > size_) {
      Extend(n - size_);
    } else {
      size_ = n;
    }
  }

 private:
  void Reallocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T) / 2) throw std::bad_alloc();
    size_t bytes = 0;
    data_ = static_cast<T*>(pod_memory::Resize(data_, capacity_ * sizeof(T), size_ * sizeof(T),
                                               std::max<size_t>(n, 1) * sizeof(T), &bytes));
    capacity_ = bytes / sizeof(T);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_POD_BUFFER_H_
