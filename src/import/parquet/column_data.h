// What a column chunk decodes into: the leaf's definition and repetition levels and its non-null
// values in one typed buffer (byte arrays as offsets into one byte buffer).
//
//   ColumnData& c = row_group.columns[0];
//   for (int64_t i = 0, v = 0; i < c.num_levels(); ++i) {
//     if (!c.def_levels().empty() && c.def_levels()[i] < c.descriptor().max_def) continue;  // null
//     int64_t x = c.int64s()[v++];
//   }
//
// Values are dense: value k is the k-th entry whose definition level is max_def (every entry when
// max_def == 0). A ColumnData owns its memory; it is movable, not copyable.
#ifndef OPSCOPE_IMPORT_PARQUET_COLUMN_DATA_H_
#define OPSCOPE_IMPORT_PARQUET_COLUMN_DATA_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "import/parquet/pod_buffer.h"
#include "import/parquet/schema.h"

namespace opscope::parquet {

// One INT96 value as stored: 8 bytes of nanoseconds in the day, then the Julian day number
// (little-endian). Deprecated by the format, still written by Spark and Impala.
struct Int96 {
  uint32_t words[3];
  uint64_t nanos_of_day() const { return uint64_t{words[1]} << 32 | words[0]; }
  int32_t julian_day() const { return static_cast<int32_t>(words[2]); }
};
static_assert(sizeof(Int96) == 12);

// Decoded values of one physical type: fixed-width values back to back in `data` (BOOLEAN as one
// byte 0/1 each, FIXED_LEN_BYTE_ARRAY type_length bytes each), or for BYTE_ARRAY the bytes of all
// values in `data` with value i at [offsets[i], offsets[i + 1]) (offsets has count + 1 entries).
struct ValueBuffer {
  PodBuffer<uint8_t> data;
  PodBuffer<int64_t> offsets;
  int64_t count = 0;

  void Clear() {
    data.clear();
    offsets.clear();
    count = 0;
  }
  std::string_view ByteArray(int64_t i) const {
    return {reinterpret_cast<const char*>(data.data()) + offsets[i],
            static_cast<size_t>(offsets[i + 1] - offsets[i])};
  }
};

class ColumnData {
 public:
  ColumnData() = default;
  explicit ColumnData(const ColumnDescriptor* descriptor, bool dictionary_indexed = false) {
    Reset(descriptor, dictionary_indexed);
  }

  // Empties this for a new read of `descriptor`'s column, keeping the memory it holds (a reader
  // that reuses its ColumnData does not fault fresh pages in for every row group).
  // `dictionary_indexed` (BYTE_ARRAY only): values are kept as indices into dictionary().
  void Reset(const ColumnDescriptor* descriptor, bool dictionary_indexed = false) {
    descriptor_ = descriptor;
    num_levels_ = 0;
    def_.clear();
    rep_.clear();
    values_.Clear();
    indices_.clear();
    indexed_ = dictionary_indexed && descriptor->type == PhysicalType::kByteArray;
    if (descriptor->type == PhysicalType::kByteArray) values_.offsets.push_back(0);
  }

  const ColumnDescriptor& descriptor() const { return *descriptor_; }
  PhysicalType type() const { return descriptor_->type; }

  // Level entries (values and nulls; for repeated columns also empty lists).
  int64_t num_levels() const { return num_levels_; }
  // Non-null values.
  int64_t num_values() const { return values_.count; }
  // Empty when max_def == 0 (every entry holds a value) / when max_rep == 0 (every entry starts a
  // row).
  std::span<const int16_t> def_levels() const { return def_.span(); }
  std::span<const int16_t> rep_levels() const { return rep_.span(); }

  // The values, by physical type (empty spans for other types).
  std::span<const uint8_t> bools() const { return Fixed<uint8_t>(PhysicalType::kBoolean); }
  std::span<const int32_t> int32s() const { return Fixed<int32_t>(PhysicalType::kInt32); }
  std::span<const int64_t> int64s() const { return Fixed<int64_t>(PhysicalType::kInt64); }
  std::span<const float> floats() const { return Fixed<float>(PhysicalType::kFloat); }
  std::span<const double> doubles() const { return Fixed<double>(PhysicalType::kDouble); }
  std::span<const Int96> int96s() const { return Fixed<Int96>(PhysicalType::kInt96); }
  // BYTE_ARRAY: value i is bytes()[offsets()[i], offsets()[i + 1]). FIXED_LEN_BYTE_ARRAY: value i
  // is type_length bytes at i * type_length; offsets() is empty.
  std::span<const int64_t> offsets() const { return values_.offsets.span(); }
  std::span<const uint8_t> bytes() const { return values_.data.span(); }
  // Dictionary-indexed columns (ReadOptions::dictionary_index_columns): value i is
  // dictionary().ByteArray(dictionary_indices()[i]); offsets() and bytes() are then empty. The
  // dictionary holds the chunk's dictionary page, then the values of any page stored without it.
  bool dictionary_indexed() const { return indexed_; }
  std::span<const int32_t> dictionary_indices() const { return indices_.span(); }
  const ValueBuffer& dictionary() const { return dictionary_; }

  // BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY value i.
  std::string_view ByteArray(int64_t i) const {
    if (indexed_) return dictionary_.ByteArray(indices_[i]);
    if (type() == PhysicalType::kByteArray) return values_.ByteArray(i);
    const size_t w = static_cast<size_t>(descriptor_->type_length);
    return {reinterpret_cast<const char*>(values_.data.data()) + i * w, w};
  }

  // Decoder side (column_reader.cc).
  ValueBuffer* mutable_values() { return &values_; }
  PodBuffer<int16_t>* mutable_def_levels() { return &def_; }
  PodBuffer<int16_t>* mutable_rep_levels() { return &rep_; }
  PodBuffer<int32_t>* mutable_dictionary_indices() { return &indices_; }
  void add_levels(int64_t n) { num_levels_ += n; }
  // The reader's working memory, kept for the next read: a page decompressed, the dictionary.
  PodBuffer<uint8_t>* mutable_scratch() { return &scratch_; }
  ValueBuffer* mutable_dictionary() { return &dictionary_; }
  // Bytes held (capacity not counted).
  uint64_t bytes_held() const {
    return values_.data.size() + values_.offsets.size() * 8 + (def_.size() + rep_.size()) * 2 +
           indices_.size() * 4;
  }

 private:
  template <typename T>
  std::span<const T> Fixed(PhysicalType want) const {
    if (descriptor_ == nullptr || descriptor_->type != want) return {};
    return {reinterpret_cast<const T*>(values_.data.data()), static_cast<size_t>(values_.count)};
  }

  const ColumnDescriptor* descriptor_ = nullptr;  // owned by the file's Schema
  int64_t num_levels_ = 0;
  PodBuffer<int16_t> def_;
  PodBuffer<int16_t> rep_;
  ValueBuffer values_;
  bool indexed_ = false;
  PodBuffer<int32_t> indices_;  // dictionary-indexed columns: one per value
  PodBuffer<uint8_t> scratch_;
  ValueBuffer dictionary_;
};

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_COLUMN_DATA_H_
