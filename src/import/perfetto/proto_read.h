// Reading protobuf fields with protozero, tolerant of what a writer may choose: repeated scalars
// one per field or packed, and a field of an unexpected wire type skipped rather than misread
// (protozero asserts on a wrong-type read). Header-only helpers for the Perfetto reader.
#ifndef OPSCOPE_IMPORT_PERFETTO_PROTO_READ_H_
#define OPSCOPE_IMPORT_PERFETTO_PROTO_READ_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <protozero/pbf_reader.hpp>
#include <protozero/varint.hpp>
#include <string_view>
#include <vector>

namespace opscope::import::perfetto {

inline bool IsBytes(const protozero::pbf_reader& r) {
  return r.wire_type() == protozero::pbf_wire_type::length_delimited;
}
inline bool IsVarint(const protozero::pbf_reader& r) {
  return r.wire_type() == protozero::pbf_wire_type::varint;
}
inline bool IsFixed64(const protozero::pbf_reader& r) {
  return r.wire_type() == protozero::pbf_wire_type::fixed64;
}
inline std::string_view AsText(protozero::data_view v) {
  return std::string_view(v.data(), v.size());
}

// The current field as a varint (skipped, nullopt, when it is not one).
inline std::optional<int64_t> Varint(protozero::pbf_reader& r) {
  if (!IsVarint(r)) {
    r.skip();
    return std::nullopt;
  }
  return r.get_int64();
}
inline std::optional<uint64_t> Uvarint(protozero::pbf_reader& r) {
  if (!IsVarint(r)) {
    r.skip();
    return std::nullopt;
  }
  return r.get_uint64();
}
// The current field's bytes (skipped, nullopt, when it is not length-delimited).
inline std::optional<std::string_view> TextField(protozero::pbf_reader& r) {
  if (!IsBytes(r)) {
    r.skip();
    return std::nullopt;
  }
  return AsText(r.get_view());
}

// Appends a repeated field's value(s): one varint / fixed64 value, or a packed run of them.
inline void ReadUints(protozero::pbf_reader& r, std::vector<uint64_t>* out) {
  if (IsVarint(r)) {
    out->push_back(r.get_uint64());
  } else if (IsBytes(r)) {
    for (uint64_t v : r.get_packed_uint64()) out->push_back(v);
  } else {
    r.skip();
  }
}
inline void ReadFixed(protozero::pbf_reader& r, std::vector<uint64_t>* out) {
  if (IsFixed64(r)) {
    out->push_back(r.get_fixed64());
  } else if (IsBytes(r)) {
    for (uint64_t v : r.get_packed_fixed64()) out->push_back(v);
  } else {
    r.skip();
  }
}
inline void ReadInts(protozero::pbf_reader& r, std::vector<int64_t>* out) {
  if (IsVarint(r)) {
    out->push_back(r.get_int64());
  } else if (IsBytes(r)) {
    for (int64_t v : r.get_packed_int64()) out->push_back(v);
  } else {
    r.skip();
  }
}
inline void ReadDoubles(protozero::pbf_reader& r, std::vector<double>* out) {
  if (IsFixed64(r)) {
    out->push_back(r.get_double());
  } else if (IsBytes(r)) {
    for (double v : r.get_packed_double()) out->push_back(v);
  } else {
    r.skip();
  }
}

// The hot path's reading: a message's fields straight off its bytes with protozero's varint
// decoder, for the few field keys (field number and wire type) a decoder knows to expect. A
// caller meeting any other key gives up and reads the message again with pbf_reader, which takes
// every field; so these read nothing pbf_reader would read differently. Varints past the end
// throw protozero::end_of_buffer_exception, as pbf_reader's do.
constexpr uint64_t FieldKey(uint32_t field, protozero::pbf_wire_type wire) {
  return (uint64_t{field} << 3) | static_cast<uint64_t>(wire);
}
class RawFields {
 public:
  explicit RawFields(protozero::data_view message)
      : p_(message.data()), end_(message.data() + message.size()) {}
  bool done() const { return p_ == end_; }
  uint64_t Key() { return protozero::decode_varint(&p_, end_); }
  uint64_t Varint() { return protozero::decode_varint(&p_, end_); }
  // A length-delimited value; false when its length runs past the message.
  bool Bytes(protozero::data_view* out) {
    const uint64_t n = protozero::decode_varint(&p_, end_);
    if (n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = protozero::data_view(p_, static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  // A fixed64 value; false when fewer than 8 bytes are left.
  bool Fixed64(uint64_t* out) {
    if (end_ - p_ < 8) return false;
    std::memcpy(out, p_, 8);
    if constexpr (std::endian::native == std::endian::big) *out = __builtin_bswap64(*out);
    p_ += 8;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_PROTO_READ_H_
