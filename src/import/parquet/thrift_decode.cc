// The footer and page headers through Thrift's compact protocol, and the schema built from the
// footer's elements.
#include "import/parquet/thrift_decode.h"

#include <thrift/TConfiguration.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <memory>

namespace opscope::parquet {
namespace {

using apache::thrift::TConfiguration;
using apache::thrift::protocol::TCompactProtocolT;
using apache::thrift::transport::TMemoryBuffer;

// Page headers larger than this are refused (statistics of a few values do not come close).
constexpr size_t kMaxPageHeaderBytes = size_t{16} << 20;

// Reads one `T` from the front of [data, data + size) under limits derived from `size`; returns
// "" and the bytes read, or the reason.
template <typename T>
std::string DecodeThrift(const uint8_t* data, size_t size, T* out, uint32_t* read_bytes) {
  if (size > static_cast<size_t>(INT_MAX)) return "Thrift message over 2 GiB";
  const auto limit = static_cast<int32_t>(size);
  try {
    // Thrift's own checks: the message may not read past `limit` bytes, a string or container may
    // not claim more than that, and structs may nest 64 deep.
    auto config = std::make_shared<TConfiguration>(std::max(limit, 1));
    // OBSERVE: Thrift reads the caller's bytes in place and never writes them.
    auto buffer = std::make_shared<TMemoryBuffer>(
        const_cast<uint8_t*>(data), static_cast<uint32_t>(size), TMemoryBuffer::OBSERVE, config);
    TCompactProtocolT<TMemoryBuffer> protocol(buffer, limit, limit);
    out->read(&protocol);
    *read_bytes = static_cast<uint32_t>(size - buffer->available_read());
    return "";
  } catch (const std::exception& e) {
    return std::string("malformed Thrift: ") + e.what();
  }
}

LogicalType ToLogicalType(const ::parquet::LogicalType& t) {
  using K = LogicalType::Kind;
  LogicalType out;
  const auto& s = t.__isset;
  auto unit = [](const ::parquet::TimeUnit& u) {
    return u.__isset.NANOS    ? TimeUnit::kNanos
           : u.__isset.MICROS ? TimeUnit::kMicros
                              : TimeUnit::kMillis;
  };
  if (s.STRING) {
    out.kind = K::kString;
  } else if (s.MAP) {
    out.kind = K::kMap;
  } else if (s.LIST) {
    out.kind = K::kList;
  } else if (s.ENUM) {
    out.kind = K::kEnum;
  } else if (s.DECIMAL) {
    out.kind = K::kDecimal;
    out.decimal_scale = t.DECIMAL.scale;
    out.decimal_precision = t.DECIMAL.precision;
  } else if (s.DATE) {
    out.kind = K::kDate;
  } else if (s.TIME) {
    out.kind = K::kTime;
    out.unit = unit(t.TIME.unit);
    out.adjusted_to_utc = t.TIME.isAdjustedToUTC;
  } else if (s.TIMESTAMP) {
    out.kind = K::kTimestamp;
    out.unit = unit(t.TIMESTAMP.unit);
    out.adjusted_to_utc = t.TIMESTAMP.isAdjustedToUTC;
  } else if (s.INTEGER) {
    out.kind = K::kInteger;
    out.bit_width = t.INTEGER.bitWidth;
    out.is_signed = t.INTEGER.isSigned;
  } else if (s.UNKNOWN) {
    out.kind = K::kNull;  // parquet.thrift's NullType, field UNKNOWN
  } else if (s.JSON) {
    out.kind = K::kJson;
  } else if (s.BSON) {
    out.kind = K::kBson;
  } else if (s.UUID) {
    out.kind = K::kUuid;
  } else if (s.FLOAT16) {
    out.kind = K::kFloat16;
  } else if (s.VARIANT) {
    out.kind = K::kVariant;
  } else if (s.GEOMETRY) {
    out.kind = K::kGeometry;
  } else if (s.GEOGRAPHY) {
    out.kind = K::kGeography;
  } else if (s.FILE) {
    out.kind = K::kFile;
  } else {
    out.kind = K::kUnknown;  // a member this reader's parquet.thrift does not know
  }
  return out;
}

// One schema element as a node (children are linked by BuildSchema).
std::string ToNode(const ::parquet::SchemaElement& e, bool is_root, SchemaNode* n) {
  n->name = e.name;
  const int rep = e.__isset.repetition_type ? RawEnum(e.repetition_type) : 0;
  if (rep < 0 || rep > 2) {
    if (!is_root) return "field '" + e.name + "' has repetition " + std::to_string(rep);
  } else {
    n->repetition = static_cast<Repetition>(rep);
  }
  if (e.__isset.converted_type) {
    const int ct = RawEnum(e.converted_type);
    // Converted types this reader does not know are ignored, as unknown logical types are.
    if (ct >= 0 && ct <= static_cast<int>(ConvertedType::kInterval)) {
      n->converted_type = static_cast<ConvertedType>(ct);
    }
  }
  if (e.__isset.logicalType) n->logical_type = ToLogicalType(e.logicalType);
  n->scale = e.__isset.scale ? e.scale : 0;
  n->precision = e.__isset.precision ? e.precision : 0;
  n->has_field_id = e.__isset.field_id;
  n->field_id = e.__isset.field_id ? e.field_id : 0;
  const bool group = e.__isset.num_children || is_root;
  if (group) {
    n->nesting = Nesting::kStruct;
    return "";
  }
  if (!e.__isset.type) return "column '" + e.name + "' has no physical type";
  const int type = RawEnum(e.type);
  if (type < 0 || type > static_cast<int>(PhysicalType::kFixedLenByteArray)) {
    return "column '" + e.name + "' has physical type " + std::to_string(type);
  }
  n->nesting = Nesting::kLeaf;
  n->type = static_cast<PhysicalType>(type);
  if (n->type == PhysicalType::kFixedLenByteArray) {
    if (!e.__isset.type_length || e.type_length <= 0) {
      return "FIXED_LEN_BYTE_ARRAY column '" + e.name + "' has type_length " +
             std::to_string(e.__isset.type_length ? e.type_length : 0);
    }
    n->type_length = e.type_length;
  } else if (n->type == PhysicalType::kInt96) {
    n->type_length = 12;
  }
  return "";
}

}  // namespace

std::string DecodeFileMetaData(const uint8_t* data, size_t size, ::parquet::FileMetaData* out) {
  uint32_t read = 0;
  return DecodeThrift(data, size, out, &read);
}

std::string DecodePageHeader(const uint8_t* data, size_t size, ::parquet::PageHeader* out,
                             uint32_t* header_bytes) {
  return DecodeThrift(data, std::min(size, kMaxPageHeaderBytes), out, header_bytes);
}

std::string BuildSchema(const std::vector<::parquet::SchemaElement>& elements, Schema* schema) {
  *schema = Schema();
  if (elements.empty()) return "the footer's schema is empty";
  // Depth-first: each group is followed by its num_children subtrees. `open` holds the groups
  // still expecting children, with how many.
  struct Open {
    int node;
    int32_t remaining;
  };
  std::vector<Open> open;
  for (size_t i = 0; i < elements.size(); ++i) {
    const ::parquet::SchemaElement& e = elements[i];
    SchemaNode n;
    if (std::string why = ToNode(e, i == 0, &n); !why.empty()) return why;
    if (i > 0) {
      while (!open.empty() && open.back().remaining == 0) open.pop_back();
      if (open.empty()) return "schema element " + std::to_string(i) + " lies outside the root";
      n.parent = open.back().node;
      --open.back().remaining;
    }
    const int32_t children = e.__isset.num_children ? e.num_children : 0;
    if (children < 0 || static_cast<size_t>(children) > elements.size() - i - 1) {
      return "group '" + e.name + "' claims " + std::to_string(children) + " children";
    }
    const int index = schema->AddNode(std::move(n));
    if (index > 0) schema->AddChild(schema->node(index).parent, index);
    if (!schema->node(index).is_leaf()) open.push_back({index, children});
  }
  for (const Open& o : open) {
    if (o.remaining != 0) return "group '" + schema->node(o.node).name + "' lacks children";
  }
  return schema->Finish();
}

}  // namespace opscope::parquet
