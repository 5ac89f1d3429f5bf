// The format's names for its enums, as parquet.thrift spells them (for errors and dumps).
#include <string>
#include <string_view>

#include "import/parquet/schema.h"

namespace opscope::parquet {

std::string_view ToString(PhysicalType t) {
  static constexpr std::string_view kNames[] = {
      "BOOLEAN", "INT32",  "INT64",      "INT96",
      "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  const auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

std::string_view ToString(Repetition r) {
  switch (r) {
    case Repetition::kRequired:
      return "REQUIRED";
    case Repetition::kOptional:
      return "OPTIONAL";
    case Repetition::kRepeated:
      return "REPEATED";
  }
  return "?";
}

std::string_view ToString(ConvertedType t) {
  static constexpr std::string_view kNames[] = {"UTF8",
                                                "MAP",
                                                "MAP_KEY_VALUE",
                                                "LIST",
                                                "ENUM",
                                                "DECIMAL",
                                                "DATE",
                                                "TIME_MILLIS",
                                                "TIME_MICROS",
                                                "TIMESTAMP_MILLIS",
                                                "TIMESTAMP_MICROS",
                                                "UINT_8",
                                                "UINT_16",
                                                "UINT_32",
                                                "UINT_64",
                                                "INT_8",
                                                "INT_16",
                                                "INT_32",
                                                "INT_64",
                                                "JSON",
                                                "BSON",
                                                "INTERVAL"};
  const int i = static_cast<int>(t);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i] : "";
}

std::string_view ToString(Encoding e) {
  switch (e) {
    case Encoding::kPlain:
      return "PLAIN";
    case Encoding::kPlainDictionary:
      return "PLAIN_DICTIONARY";
    case Encoding::kRle:
      return "RLE";
    case Encoding::kBitPacked:
      return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked:
      return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray:
      return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray:
      return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary:
      return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit:
      return "BYTE_STREAM_SPLIT";
    case Encoding::kAlp:
      return "ALP";
  }
  return "";
}

std::string_view ToString(Codec c) {
  static constexpr std::string_view kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                                "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  const auto i = static_cast<size_t>(c);
  return i < std::size(kNames) ? kNames[i] : "";
}

std::string_view ToString(LogicalType::Kind k) {
  using K = LogicalType::Kind;
  switch (k) {
    case K::kNone:
      return "";
    case K::kString:
      return "STRING";
    case K::kMap:
      return "MAP";
    case K::kList:
      return "LIST";
    case K::kEnum:
      return "ENUM";
    case K::kDecimal:
      return "DECIMAL";
    case K::kDate:
      return "DATE";
    case K::kTime:
      return "TIME";
    case K::kTimestamp:
      return "TIMESTAMP";
    case K::kInteger:
      return "INTEGER";
    case K::kNull:
      return "NULL";
    case K::kJson:
      return "JSON";
    case K::kBson:
      return "BSON";
    case K::kUuid:
      return "UUID";
    case K::kFloat16:
      return "FLOAT16";
    case K::kVariant:
      return "VARIANT";
    case K::kGeometry:
      return "GEOMETRY";
    case K::kGeography:
      return "GEOGRAPHY";
    case K::kFile:
      return "FILE";
    case K::kUnknown:
      return "UNKNOWN";
  }
  return "";
}

std::string EncodingName(int32_t value) {
  if (value >= 0 && value <= static_cast<int32_t>(Encoding::kAlp)) {
    const std::string_view name = ToString(static_cast<Encoding>(value));
    if (!name.empty()) return std::string(name);
  }
  return "encoding " + std::to_string(value);
}

std::string CodecName(int32_t value) {
  if (value >= 0 && value <= static_cast<int32_t>(Codec::kLz4Raw)) {
    return std::string(ToString(static_cast<Codec>(value)));
  }
  return "codec " + std::to_string(value);
}

}  // namespace opscope::parquet
