// Debug annotations to args JSON (debug_annotations.h).
#include "import/perfetto/debug_annotations.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <protozero/varint.hpp>

#include "base/json_escape.h"
#include "base/json_scan.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pa = opscope::perfetto::annotation;
using protozero::pbf_reader;
using protozero::pbf_wire_type;

void AppendDouble(std::string* out, double v) {
  if (!std::isfinite(v)) {
    *out += "null";  // JSON has no NaN or infinity
    return;
  }
  fmt::format_to(std::back_inserter(*out), "{}", v);
}

bool ParseInt(std::string_view text, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && internal::IsJsonSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && internal::IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The JSON string a text field holds (a string field's bytes need not be UTF-8).
void AppendText(std::string* out, std::string_view s) { internal::AppendJsonString(*out, s); }

}  // namespace

std::string_view CheckedJsonValue(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return {};
  const char c = text.front();
  if (c == '{' || c == '[' || c == '"') {
    return internal::JsonValueEnd(text, 0) == text.size() ? text : std::string_view();
  }
  // A bare scalar: a number, true, false or null, which the structure scan does not check.
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  return parser.parse(text.data(), text.size()).get(e) == simdjson::SUCCESS ? text
                                                                            : std::string_view();
}

void ArgsBuilder::Reset(const SequenceState* sequence) {
  sequence_ = sequence;
  members_ = 0;
  text_.clear();
  text_.push_back('{');
  external_id.reset();
  correlation.reset();
  external_id_override.reset();
  input_dims_.reset();
  input_shapes_override.reset();
  kind.reset();
}

std::string_view ArgsBuilder::Json() {
  text_ += '}';
  return text_;
}

// The annotation's name: interned (its key text is ready) or inline. False when its iid was not
// interned.
bool ArgsBuilder::Key(protozero::data_view annotation, std::string* out, ArgRole* role,
                      std::string* why) const {
  pbf_reader r(annotation);
  while (r.next()) {
    if (r.tag() == pa::kNameIid && r.wire_type() == pbf_wire_type::varint) {
      const uint64_t iid = r.get_uint64();
      const AnnotationName* interned =
          sequence_ != nullptr ? sequence_->annotation_names.Find(iid) : nullptr;
      if (interned == nullptr) {
        *why = "debug annotation name iid " + std::to_string(iid) + " was not interned";
        return false;
      }
      *out += interned->key();
      *role = interned->role;
      return true;
    }
    if (r.tag() == pa::kName && r.wire_type() == pbf_wire_type::length_delimited) {
      const protozero::data_view v = r.get_view();
      const std::string_view name(v.data(), v.size());
      AppendText(out, name);
      *out += ": ";
      *role = RoleOfArgName(name);
      return true;
    }
    r.skip();
  }
  *out += "\"\": ";  // no name
  *role = ArgRole::kArg;
  return true;
}

// The annotation as writers most often emit it: an interned name, then one int, uint, bool or
// interned string value, and nothing else. Appends it as Add would and returns true; returns false,
// having appended nothing, for any other shape (Add's general path then reads it, and says what is
// wrong with it when something is).
bool ArgsBuilder::AddSimple(protozero::data_view annotation) {
  const char* p = annotation.data();
  const char* const end = p + annotation.size();
  constexpr auto kNameIidKey = static_cast<char>(pa::kNameIid << 3);  // varint wire type
  if (annotation.size() < 4 || *p != kNameIidKey || sequence_ == nullptr) return false;
  ++p;
  const uint64_t iid = protozero::decode_varint(&p, end);
  if (p == end) return false;
  const uint64_t key = protozero::decode_varint(&p, end);
  if ((key & 7) != 0 || p == end) return false;  // a varint value, and nothing after it
  const uint64_t value = protozero::decode_varint(&p, end);
  if (p != end) return false;
  const AnnotationName* name = sequence_->annotation_names.Find(iid);
  if (name == nullptr) return false;
  const ArgRole role = name->role;
  if (role == ArgRole::kKind || role == ArgRole::kExternalIdOverride ||
      role == ArgRole::kInputShapesOverride) {
    return false;  // opscope's reserved fields: rare
  }
  char digits[24];
  std::string_view value_text;
  // An integer value's role reads the integer itself rather than parsing back its text.
  std::optional<int64_t> integer;
  switch (key >> 3) {
    case pa::kIntValue:
      integer = static_cast<int64_t>(value);
      value_text = std::string_view(
          digits,
          std::to_chars(digits, digits + sizeof(digits), static_cast<int64_t>(value)).ptr - digits);
      break;
    case pa::kUintValue:
      if (value <= static_cast<uint64_t>(INT64_MAX)) integer = static_cast<int64_t>(value);
      value_text = std::string_view(
          digits, std::to_chars(digits, digits + sizeof(digits), value).ptr - digits);
      break;
    case pa::kBoolValue:
      value_text = value != 0 ? std::string_view("true") : std::string_view("false");
      break;
    case pa::kStringValueIid: {
      const std::string* s = FindString(value);
      if (s == nullptr) return false;
      value_text = *s;
      break;
    }
    default:
      return false;
  }
  text_ += members_ > 0 ? std::string_view(name->member) : name->key();
  const size_t value_start = text_.size();
  text_ += value_text;
  if (role == ArgRole::kExternalId && integer) {
    external_id = *integer;
  } else if (role == ArgRole::kCorrelation && integer) {
    correlation = *integer;
  } else if (role != ArgRole::kArg) {
    NoteRole(role, value_start);
  }
  ++members_;
  return true;
}

bool ArgsBuilder::Add(protozero::data_view annotation, std::string* why) {
  if (AddSimple(annotation)) return true;
  const size_t rollback = text_.size();
  if (members_ > 0) text_.append(", ", 2);
  ArgRole role = ArgRole::kArg;
  size_t value_start = 0;
  if (!Member(annotation, 0, &text_, &role, &value_start, why)) {
    text_.resize(rollback);
    return false;
  }
  if (role != ArgRole::kArg) {
    NoteRole(role, value_start);
    if (role == ArgRole::kKind || role == ArgRole::kExternalIdOverride ||
        role == ArgRole::kInputShapesOverride) {
      text_.resize(rollback);  // opscope's reserved fields: not args
      return true;
    }
  }
  ++members_;
  return true;
}

// Appends `"name": value` of one annotation (or dict entry). The name comes first in what
// writers write, so one pass reads both; a name after the value takes a second pass for it.
bool ArgsBuilder::Member(protozero::data_view annotation, int depth, std::string* out,
                         ArgRole* role, size_t* value_start, std::string* why) {
  pbf_reader r(annotation);
  pbf_reader first = r;
  if (first.next() && first.tag() == pa::kNameIid && first.wire_type() == pbf_wire_type::varint) {
    const uint64_t iid = first.get_uint64();
    const AnnotationName* interned =
        sequence_ != nullptr ? sequence_->annotation_names.Find(iid) : nullptr;
    if (interned == nullptr) {
      *why = "debug annotation name iid " + std::to_string(iid) + " was not interned";
      return false;
    }
    out->append(interned->key());
    *role = interned->role;
    *value_start = out->size();
    return Value(first, depth, out, why);
  }
  if (!Key(annotation, out, role, why)) return false;
  *value_start = out->size();
  return Value(r, depth, out, why);
}

void ArgsBuilder::NoteRole(ArgRole role, size_t value_start) {
  const std::string_view value_text = std::string_view(text_).substr(value_start);
  int64_t v = 0;
  switch (role) {
    case ArgRole::kArg:
      break;
    case ArgRole::kExternalId:
      if (ParseInt(value_text, &v)) external_id = v;
      break;
    case ArgRole::kCorrelation:
      if (ParseInt(value_text, &v)) correlation = v;
      break;
    case ArgRole::kInputDims:
      if (!value_text.empty() && value_text.front() == '[') {
        input_dims_ = std::make_pair(value_start, value_text.size());
      }
      break;
    case ArgRole::kExternalIdOverride:
      if (ParseInt(value_text, &v)) external_id_override = v;
      break;
    case ArgRole::kKind:
    case ArgRole::kInputShapesOverride: {
      // A string: the text the JSON string holds.
      simdjson::dom::parser parser;
      std::string_view text;
      if (!value_text.empty() && value_text.front() == '"' &&
          parser.parse(value_text.data(), value_text.size()).get_string().get(text) ==
              simdjson::SUCCESS) {
        (role == ArgRole::kKind ? kind : input_shapes_override) = std::string(text);
      }
      break;
    }
  }
}

namespace {

// Whether a field of tag `tag` and wire type `wire` is one of DebugAnnotation's scalar values
// (the nested_value of its older form counts as one).
bool IsScalarValue(uint32_t tag, pbf_wire_type wire) {
  switch (tag) {
    case pa::kBoolValue:
    case pa::kUintValue:
    case pa::kIntValue:
    case pa::kPointerValue:
    case pa::kStringValueIid:
      return wire == pbf_wire_type::varint;
    case pa::kDoubleValue:
      return wire == pbf_wire_type::fixed64;
    case pa::kStringValue:
    case pa::kLegacyJsonValue:
    case pa::kNestedValue:
      return wire == pbf_wire_type::length_delimited;
    default:
      return false;
  }
}

}  // namespace

// Appends the JSON value of one DebugAnnotation (or dict entry, or array element) to `out`, in one
// pass over its fields: a scalar, or a dict or array opened at its first entry and closed at the
// end (fields that contradict the first are passed over); "null" when it has no value (a typed
// proto value is not modelled).
bool ArgsBuilder::Value(pbf_reader r, int depth, std::string* out, std::string* why) {
  if (depth > max_depth_) {
    *why = "debug annotation nests deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  enum class Shape { kNone, kScalar, kDict, kArray } shape = Shape::kNone;
  auto item = [&](Shape s, char open) {
    if (shape == Shape::kNone) {
      *out += open;
      shape = s;
      return true;
    }
    if (shape != s) return false;
    *out += ", ";
    return true;
  };
  while (r.next()) {
    const uint32_t tag = r.tag();  // before any get_*: protozero's debug builds reset it there
    const auto wire = r.wire_type();
    const bool bytes = wire == pbf_wire_type::length_delimited;
    if (IsScalarValue(tag, wire)) {
      if (shape != Shape::kNone) {
        r.skip();
        continue;
      }
      shape = Shape::kScalar;
      if (!Scalar(r, tag, depth, out, why)) return false;
    } else if (tag == pa::kDictEntries && bytes && item(Shape::kDict, '{')) {
      ArgRole unused;
      size_t unused_start = 0;
      if (!Member(r.get_view(), depth + 1, out, &unused, &unused_start, why)) return false;
    } else if (tag == pa::kArrayValues && bytes && item(Shape::kArray, '[')) {
      if (!Value(pbf_reader(r.get_view()), depth + 1, out, why)) return false;
    } else {
      r.skip();
    }
  }
  if (shape == Shape::kDict) *out += '}';
  if (shape == Shape::kArray) *out += ']';
  if (shape == Shape::kNone) out->append("null", 4);
  return true;
}

// Appends the scalar value field `r` is at (IsScalarValue(tag, its wire type)). False, with `why`,
// when a string iid was not interned or a nested value is malformed.
bool ArgsBuilder::Scalar(pbf_reader& r, uint32_t tag, int depth, std::string* out,
                         std::string* why) {
  char buf[32];
  switch (tag) {
    case pa::kBoolValue:
      if (r.get_bool()) {
        out->append("true", 4);
      } else {
        out->append("false", 5);
      }
      return true;
    case pa::kUintValue:
      out->append(buf, std::to_chars(buf, buf + sizeof(buf), r.get_uint64()).ptr);
      return true;
    case pa::kIntValue:
      out->append(buf, std::to_chars(buf, buf + sizeof(buf), r.get_int64()).ptr);
      return true;
    case pa::kDoubleValue:
      AppendDouble(out, r.get_double());
      return true;
    case pa::kPointerValue:
      fmt::format_to(std::back_inserter(*out), "\"0x{:x}\"", r.get_uint64());
      return true;
    case pa::kStringValue: {
      const protozero::data_view v = r.get_view();
      AppendText(out, std::string_view(v.data(), v.size()));
      return true;
    }
    case pa::kStringValueIid:
      return InternedString(r.get_uint64(), out, why);
    case pa::kLegacyJsonValue: {
      const protozero::data_view v = r.get_view();
      const std::string_view raw(v.data(), v.size());
      const std::string_view checked = CheckedJsonValue(raw);
      if (checked.empty()) {
        AppendText(out, raw);  // not JSON: kept as the text it is
      } else {
        *out += checked;
      }
      return true;
    }
    case pa::kNestedValue:
      return Nested(r.get_view(), depth + 1, out, why);
    default:
      r.skip();
      return true;
  }
}

// Appends an interned string value: opscope's JSON values first (iids from kJsonStringIidBase),
// then the sequence's strings.
const std::string* ArgsBuilder::FindString(uint64_t iid) const {
  if (sequence_ == nullptr) return nullptr;
  const std::string* s = nullptr;
  if (iid >= opscope::perfetto::kJsonStringIidBase) {
    s = sequence_->annotation_json.Find(iid - opscope::perfetto::kJsonStringIidBase);
  }
  return s != nullptr ? s : sequence_->annotation_strings.Find(iid);
}

bool ArgsBuilder::InternedString(uint64_t iid, std::string* out, std::string* why) const {
  const std::string* s = FindString(iid);
  if (s == nullptr) {
    *why = "debug annotation string iid " + std::to_string(iid) + " was not interned";
    return false;
  }
  *out += *s;
  return true;
}

// Appends a NestedValue (the older form of nested dicts and arrays).
bool ArgsBuilder::Nested(protozero::data_view nested, int depth, std::string* out,
                         std::string* why) {
  if (depth > max_depth_) {
    *why = "debug annotation nests deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  pbf_reader r(nested);
  uint64_t type = 0;
  std::vector<std::string_view> keys;
  std::vector<std::string> values;
  std::string leaf;
  while (r.next()) {
    const auto wire = r.wire_type();
    const bool bytes = wire == pbf_wire_type::length_delimited;
    if (r.tag() == pa::kNestedType && wire == pbf_wire_type::varint) {
      type = r.get_uint64();
    } else if (r.tag() == pa::kNestedDictKeys && bytes) {
      const protozero::data_view v = r.get_view();
      keys.emplace_back(v.data(), v.size());
    } else if ((r.tag() == pa::kNestedDictValues || r.tag() == pa::kNestedArrayValues) && bytes) {
      std::string v;
      if (!Nested(r.get_view(), depth + 1, &v, why)) return false;
      values.push_back(std::move(v));
    } else if (r.tag() == pa::kNestedIntValue && wire == pbf_wire_type::varint) {
      leaf = std::to_string(r.get_int64());
    } else if (r.tag() == pa::kNestedDoubleValue && wire == pbf_wire_type::fixed64) {
      leaf.clear();
      AppendDouble(&leaf, r.get_double());
    } else if (r.tag() == pa::kNestedBoolValue && wire == pbf_wire_type::varint) {
      leaf = r.get_bool() ? "true" : "false";
    } else if (r.tag() == pa::kNestedStringValue && bytes) {
      const protozero::data_view v = r.get_view();
      leaf.clear();
      AppendText(&leaf, std::string_view(v.data(), v.size()));
    } else {
      r.skip();
    }
  }
  if (type == pa::kNestedDict) {
    *out += '{';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) *out += ", ";
      AppendText(out, i < keys.size() ? keys[i] : std::string_view());
      *out += ": " + values[i];
    }
    *out += '}';
  } else if (type == pa::kNestedArray) {
    *out += '[';
    for (size_t i = 0; i < values.size(); ++i) *out += (i > 0 ? ", " : "") + values[i];
    *out += ']';
  } else {
    *out += leaf.empty() ? "null" : leaf;
  }
  return true;
}

namespace {

void AppendElement(std::string* out, simdjson::dom::element e) { *out += simdjson::to_string(e); }

// a's members with b's merged in (see MergeArgs).
void MergeObjects(std::string* out, simdjson::dom::object a, simdjson::dom::object b) {
  *out += '{';
  bool first = true;
  auto member = [&](std::string_view key) {
    if (!first) *out += ", ";
    first = false;
    internal::AppendJsonString(*out, key);
    *out += ": ";
  };
  for (auto [key, value] : a) {
    simdjson::dom::element other;
    if (b[key].get(other) != simdjson::SUCCESS) {
      member(key);
      AppendElement(out, value);
      continue;
    }
    member(key);
    if (value.is_object() && other.is_object()) {
      MergeObjects(out, value.get_object().value_unsafe(), other.get_object().value_unsafe());
    } else if (value.is_array() && other.is_array()) {
      *out += '[';
      bool first_item = true;
      for (auto list : {value.get_array().value_unsafe(), other.get_array().value_unsafe()}) {
        for (simdjson::dom::element item : list) {
          if (!first_item) *out += ", ";
          first_item = false;
          AppendElement(out, item);
        }
      }
      *out += ']';
    } else {
      AppendElement(out, other);
    }
  }
  for (auto [key, value] : b) {
    simdjson::dom::element mine;
    if (a[key].get(mine) == simdjson::SUCCESS) continue;
    member(key);
    AppendElement(out, value);
  }
  *out += '}';
}

}  // namespace

std::string MergeArgs(std::string_view begin, std::string_view end) {
  if (begin.empty()) return std::string(end);
  if (end.empty()) return std::string(begin);
  simdjson::dom::parser pa, pb;
  simdjson::dom::object a, b;
  if (pa.parse(begin.data(), begin.size()).get_object().get(a) != simdjson::SUCCESS ||
      pb.parse(end.data(), end.size()).get_object().get(b) != simdjson::SUCCESS) {
    return std::string(begin);
  }
  std::string out;
  MergeObjects(&out, a, b);
  return out;
}

}  // namespace opscope::import::perfetto
