// Strings and args to a TrackEvent's interned ids and debug annotations (perfetto_args.h).
#include "profiler/perfetto_args.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>

#include "base/json_escape.h"
#include "base/json_scan.h"
#include "trace/perfetto_protos.h"

namespace opscope::internal {
namespace {

namespace pa = opscope::perfetto::annotation;
namespace pi = opscope::perfetto::interned;
namespace pe = opscope::perfetto::event;

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsJsonSpace(s[i])) ++i;
  return i;
}

// The members of a JSON object text: (key, raw value text). False when it is not one.
bool SplitMembers(std::string_view json, std::vector<std::pair<std::string, std::string_view>>* out,
                  simdjson::dom::parser* parser) {
  size_t i = SkipSpace(json, 0);
  if (i >= json.size() || json[i] != '{') return false;
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == '}') return true;
  while (i < json.size()) {
    if (json[i] != '"') return false;
    const size_t key_end = JsonStringEnd(json.data(), i + 1, json.size());
    if (key_end == kJsonNoEnd) return false;
    const std::string_view raw_key = json.substr(i, key_end - i);
    std::string key;
    if (raw_key.find('\\') == std::string_view::npos) {
      key = std::string(raw_key.substr(1, raw_key.size() - 2));
    } else {
      std::string_view decoded;
      if (parser->parse(raw_key.data(), raw_key.size()).get_string().get(decoded)) return false;
      key = std::string(decoded);
    }
    i = SkipSpace(json, key_end);
    if (i >= json.size() || json[i] != ':') return false;
    i = SkipSpace(json, i + 1);
    const size_t value_end = JsonValueEnd(json, i);
    if (value_end == kJsonNoEnd) return false;
    out->emplace_back(std::move(key), json.substr(i, value_end - i));
    i = SkipSpace(json, value_end);
    if (i < json.size() && json[i] == '}') return true;
    if (i >= json.size() || json[i] != ',') return false;
    i = SkipSpace(json, i + 1);
  }
  return false;
}

// The text a reader renders a typed value as (see the header); nullopt when a typed encoding
// cannot stand for it (null, empty containers: an empty annotation carries no value).
std::optional<std::string> Rendered(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::INT64:
      return std::to_string(e.get_int64().value_unsafe());
    case element_type::UINT64:
      return std::to_string(e.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return fmt::format("{}", e.get_double().value_unsafe());
    case element_type::BOOL:
      return e.get_bool().value_unsafe() ? "true" : "false";
    case element_type::STRING:
      return JsonString(e.get_string().value_unsafe());
    case element_type::NULL_VALUE:
      return std::nullopt;
    case element_type::ARRAY: {
      simdjson::dom::array a = e.get_array().value_unsafe();
      if (a.size() == 0) return std::nullopt;
      std::string out = "[";
      for (simdjson::dom::element v : a) {
        std::optional<std::string> item = Rendered(v);
        if (!item) return std::nullopt;
        out += (out.size() > 1 ? ", " : "") + *item;
      }
      return out + "]";
    }
    case element_type::OBJECT: {
      simdjson::dom::object o = e.get_object().value_unsafe();
      if (o.size() == 0) return std::nullopt;
      std::string out = "{";
      for (auto [k, v] : o) {
        std::optional<std::string> item = Rendered(v);
        if (!item) return std::nullopt;
        out += (out.size() > 1 ? ", " : "") + JsonString(k) + ": " + *item;
      }
      return out + "}";
    }
  }
  return std::nullopt;
}

void WriteTyped(simdjson::dom::element e, protozero::pbf_writer* a, SequenceInterner* interner) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::INT64:
      a->add_int64(pa::kIntValue, e.get_int64().value_unsafe());
      break;
    case element_type::UINT64:
      a->add_uint64(pa::kUintValue, e.get_uint64().value_unsafe());
      break;
    case element_type::DOUBLE:
      a->add_double(pa::kDoubleValue, e.get_double().value_unsafe());
      break;
    case element_type::BOOL:
      a->add_bool(pa::kBoolValue, e.get_bool().value_unsafe());
      break;
    case element_type::STRING:
      a->add_uint64(pa::kStringValueIid, interner->AnnotationString(e.get_string().value_unsafe()));
      break;
    case element_type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      for (simdjson::dom::element v : array) {
        protozero::pbf_writer item(*a, pa::kArrayValues);
        WriteTyped(v, &item, interner);
      }
      break;
    }
    case element_type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      for (auto [k, v] : object) {
        protozero::pbf_writer entry(*a, pa::kDictEntries);
        entry.add_uint64(pa::kNameIid, interner->AnnotationName(k));
        WriteTyped(v, &entry, interner);
      }
      break;
    }
    case element_type::NULL_VALUE:
      break;
  }
}

template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// Writes `raw` (one member's value) into annotation `a`; returns the text a reader renders.
std::string WriteValue(std::string_view raw, protozero::pbf_writer* a, SequenceInterner* interner,
                       simdjson::dom::parser* parser) {
  const char c = raw.front();
  if (c == '-' || (c >= '0' && c <= '9')) {
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    if (ParseWhole(raw, &i) && std::to_string(i) == raw) {
      a->add_int64(pa::kIntValue, i);
      return std::string(raw);
    }
    if (ParseWhole(raw, &u) && std::to_string(u) == raw) {
      a->add_uint64(pa::kUintValue, u);
      return std::string(raw);
    }
    if (ParseWhole(raw, &d) && fmt::format("{}", d) == raw) {
      a->add_double(pa::kDoubleValue, d);
      return std::string(raw);
    }
  } else if (raw == "true" || raw == "false") {
    a->add_bool(pa::kBoolValue, raw == "true");
    return std::string(raw);
  } else if (c == '"' || c == '[' || c == '{') {
    simdjson::dom::element e;
    if (parser->parse(raw.data(), raw.size()).get(e) == simdjson::SUCCESS) {
      std::optional<std::string> rendered = Rendered(e);
      if (rendered && *rendered == raw) {
        WriteTyped(e, a, interner);
        return std::string(raw);
      }
    }
  }
  // Text a typed value cannot give back: as it is. A reader keeps it when its brackets and strings
  // are well formed (scalars: when it parses), else as a string.
  a->add_string(pa::kLegacyJsonValue, raw.data(), raw.size());
  bool valid = false;
  if (c == '"' || c == '[' || c == '{') {
    valid = JsonValueEnd(raw, 0) == raw.size();
  } else {
    simdjson::dom::element e;
    valid = parser->parse(raw.data(), raw.size()).get(e) == simdjson::SUCCESS;
  }
  return valid ? std::string(raw) : JsonString(raw);
}

}  // namespace

uint64_t SequenceInterner::Intern(std::unordered_map<StringId, uint32_t>* table, StringId id,
                                  std::string_view text, int kind) {
  auto [it, inserted] = table->try_emplace(id, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(table->size());
    pending_[kind].emplace_back(it->second, std::string(text));
  }
  return it->second;
}

uint64_t SequenceInterner::Intern(std::unordered_map<std::string, uint32_t>* table,
                                  std::string_view text, int kind) {
  auto it = table->find(std::string(text));
  if (it != table->end()) return it->second;
  const auto iid = static_cast<uint32_t>(table->size() + 1);
  table->emplace(std::string(text), iid);
  pending_[kind].emplace_back(iid, std::string(text));
  return iid;
}

void SequenceInterner::Flush(protozero::pbf_writer* packet) {
  static constexpr uint32_t kFields[4] = {pi::kEventNames, pi::kEventCategories,
                                          pi::kDebugAnnotationNames,
                                          pi::kDebugAnnotationStringValues};
  bool any = false;
  for (const auto& list : pending_) any |= !list.empty();
  if (!any) return;
  protozero::pbf_writer data(*packet, opscope::perfetto::packet::kInternedData);
  for (int kind = 0; kind < 4; ++kind) {
    for (const auto& [iid, text] : pending_[kind]) {
      protozero::pbf_writer entry(data, kFields[kind]);
      entry.add_uint64(pi::kIid, iid);
      entry.add_string(pi::kName, text);
    }
    pending_[kind].clear();
  }
}

bool WriteArgs(std::string_view args_json, protozero::pbf_writer* event, SequenceInterner* interner,
               DerivedArgs* derived) {
  thread_local simdjson::dom::parser parser;
  std::vector<std::pair<std::string, std::string_view>> members;
  if (!SplitMembers(args_json, &members, &parser)) return false;
  for (const auto& [key, raw] : members) {
    protozero::pbf_writer a(*event, pe::kDebugAnnotations);
    a.add_uint64(pa::kNameIid, interner->AnnotationName(key));
    const std::string rendered = WriteValue(raw, &a, interner, &parser);
    int64_t v = 0;
    if ((key == "External id" || key == "external id") && ParseWhole(rendered, &v)) {
      derived->external_id = v;
    } else if (key == "correlation" && ParseWhole(rendered, &v)) {
      derived->correlation = v;
    } else if (key == "Input Dims" && !rendered.empty() && rendered.front() == '[') {
      derived->input_dims = rendered;
    }
  }
  return true;
}

void WriteStringAnnotation(std::string_view name, std::string_view value,
                           protozero::pbf_writer* event, SequenceInterner* interner) {
  protozero::pbf_writer a(*event, pe::kDebugAnnotations);
  a.add_uint64(pa::kNameIid, interner->AnnotationName(name));
  a.add_string(pa::kStringValue, value.data(), value.size());
}

void WriteIntAnnotation(std::string_view name, int64_t value, protozero::pbf_writer* event,
                        SequenceInterner* interner) {
  protozero::pbf_writer a(*event, pe::kDebugAnnotations);
  a.add_uint64(pa::kNameIid, interner->AnnotationName(name));
  a.add_int64(pa::kIntValue, value);
}

}  // namespace opscope::internal
