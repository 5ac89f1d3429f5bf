// A Parquet file's schema: the tree of fields its footer describes, its leaf columns with their
// dotted paths, physical and logical types and maximum definition / repetition levels, and how
// groups nest records (structs, LIST and MAP annotations, the legacy list forms).
//
//   const Schema& s = file->schema();
//   int col = s.FindColumn("events.list.element");          // -1 when absent
//   const ColumnDescriptor& c = s.column(col);               // c.max_def, c.max_rep, c.type
//   const SchemaNode& list = s.node(s.ListOf(c.node));       // the LIST group holding it
//
// The enums carry the format's own numbers (parquet.thrift), so a value read from a file maps
// onto them after a range check. A Schema is immutable once built and safe to share between
// threads.
#ifndef OPSCOPE_IMPORT_PARQUET_SCHEMA_H_
#define OPSCOPE_IMPORT_PARQUET_SCHEMA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::parquet {

enum class PhysicalType : uint8_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : uint8_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

// The legacy annotation (SchemaElement.converted_type); kNone when absent.
enum class ConvertedType : int8_t {
  kNone = -1,
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class Encoding : uint8_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
  kAlp = 10,
};

enum class Codec : uint8_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // deprecated: Hadoop's framing around LZ4 blocks (or, from some writers, none)
  kZstd = 6,
  kLz4Raw = 7,
};

enum class TimeUnit : uint8_t { kMillis, kMicros, kNanos };

// The logical type annotation (SchemaElement.logicalType). kUnknown: the file names a logical
// type this reader does not know (a newer writer's); the physical values still read.
struct LogicalType {
  enum class Kind : uint8_t {
    kNone,
    kString,
    kMap,
    kList,
    kEnum,
    kDecimal,
    kDate,
    kTime,
    kTimestamp,
    kInteger,
    kNull,
    kJson,
    kBson,
    kUuid,
    kFloat16,
    kVariant,
    kGeometry,
    kGeography,
    kFile,
    kUnknown,
  };
  Kind kind = Kind::kNone;
  int32_t decimal_scale = 0;          // kDecimal
  int32_t decimal_precision = 0;      // kDecimal
  TimeUnit unit = TimeUnit::kMillis;  // kTime, kTimestamp
  bool adjusted_to_utc = false;       // kTime, kTimestamp
  int8_t bit_width = 0;               // kInteger: 8, 16, 32 or 64
  bool is_signed = true;              // kInteger
};

// How a group nests the records below it (the format's LogicalTypes.md rules).
enum class Nesting : uint8_t {
  kLeaf,    // a primitive column
  kStruct,  // a plain group: one field per child
  kList,    // a LIST-annotated group; list_element names the element node
  kMap,     // a MAP (or MAP_KEY_VALUE) group with a repeated key/value child
};

struct SchemaNode {
  std::string name;
  Repetition repetition = Repetition::kRequired;
  ConvertedType converted_type = ConvertedType::kNone;
  LogicalType logical_type;
  // Leaves only.
  PhysicalType type = PhysicalType::kInt32;
  int32_t type_length = 0;  // bytes per FIXED_LEN_BYTE_ARRAY value (12 for INT96)
  int32_t scale = 0;        // DECIMAL by converted_type
  int32_t precision = 0;
  bool has_field_id = false;
  int32_t field_id = 0;

  int parent = -1;            // node index; -1 for the root
  std::vector<int> children;  // node indices, in file order
  int16_t max_def = 0;        // definition level at which this node is present
  int16_t max_rep = 0;        // repeated nodes on the path from the root, this one included
  int column = -1;            // leaf column index, -1 for groups
  Nesting nesting = Nesting::kLeaf;
  // kList: the node holding one element (the repeated child for the 2-level legacy forms, its
  // only child for the standard 3-level form). kMap: the repeated key/value group.
  int list_element = -1;
  int map_key = -1;    // kMap: the key node
  int map_value = -1;  // kMap: the value node, -1 when the map has none (a set)

  bool is_leaf() const { return nesting == Nesting::kLeaf; }
};

// One leaf column: what a column chunk of every row group holds.
struct ColumnDescriptor {
  int index = 0;                        // column index (= position in every row group)
  int node = 0;                         // its SchemaNode
  std::string path;                     // dotted path from the root, e.g. "a.list.element"
  std::vector<std::string> path_parts;  // the same, one name per level
  PhysicalType type = PhysicalType::kInt32;
  int32_t type_length = 0;
  ConvertedType converted_type = ConvertedType::kNone;
  LogicalType logical_type;
  int16_t max_def = 0;
  int16_t max_rep = 0;
};

class Schema {
 public:
  // Nodes in the footer's depth-first order; node 0 is the root (the message).
  const std::vector<SchemaNode>& nodes() const { return nodes_; }
  const SchemaNode& node(int i) const { return nodes_[i]; }
  const SchemaNode& root() const { return nodes_[0]; }
  const std::vector<ColumnDescriptor>& columns() const { return columns_; }
  const ColumnDescriptor& column(int i) const { return columns_[i]; }
  int num_columns() const { return static_cast<int>(columns_.size()); }

  // The leaf column with this dotted path, or -1.
  int FindColumn(std::string_view dotted_path) const;
  // The leaf columns under node `n` (itself when a leaf), in column order.
  std::vector<int> ColumnsUnder(int n) const;
  // The nearest LIST or MAP group above node `n` whose element / key-value subtree holds it, or
  // -1 when `n` is in none.
  int ListOf(int n) const;

  // Builders (schema.cc). Appends a node and returns its index.
  int AddNode(SchemaNode node);
  void AddChild(int parent, int child) { nodes_[parent].children.push_back(child); }
  // Derives levels, paths, columns and nesting once every node is added; "" or the reason the
  // tree is not a valid Parquet schema.
  std::string Finish();

 private:
  void ClassifyGroup(int n);

  std::vector<SchemaNode> nodes_;
  std::vector<ColumnDescriptor> columns_;
};

// The format's names (parquet.thrift spelling): "INT32", "UTF8", "RLE_DICTIONARY", "SNAPPY".
std::string_view ToString(PhysicalType t);
std::string_view ToString(Repetition r);
std::string_view ToString(ConvertedType t);  // "" for kNone
std::string_view ToString(Encoding e);       // "encoding N" style names are made by callers
std::string_view ToString(Codec c);
std::string_view ToString(LogicalType::Kind k);  // "" for kNone; "STRING", "TIMESTAMP", ...
// The name of an encoding or codec number read from a file, known or not ("encoding 17").
std::string EncodingName(int32_t value);
std::string CodecName(int32_t value);
// Bytes of one PLAIN value of a fixed-width type (1 for BOOLEAN as decoded, 12 for INT96,
// type_length for FIXED_LEN_BYTE_ARRAY); 0 for BYTE_ARRAY.
int32_t FixedWidth(PhysicalType t, int32_t type_length);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_SCHEMA_H_
