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
  } else if (c == '"') {
    std::string_view s;
    if (parser->parse(raw.data(), raw.size()).get_string().get(s) == simdjson::SUCCESS &&
        JsonString(s) == raw) {
      a->add_uint64(pa::kStringValueIid, interner->AnnotationString(s));
      return std::string(raw);
    }
  } else if ((c == '[' || c == '{') && JsonValueEnd(raw, 0) == raw.size()) {
    // Arrays and objects (shapes, grids, dtypes: the same few texts again and again) as their
    // text, interned: a string to other readers, the JSON value it is to opscope's.
    a->add_uint64(pa::kStringValueIid, interner->AnnotationJson(raw));
    return std::string(raw);
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

uint64_t SequenceInterner::Intern(std::unordered_map<std::string, uint64_t>* table,
                                  std::string_view text, int kind, uint64_t first_iid) {
  auto it = table->find(std::string(text));
  if (it != table->end()) return it->second;
  const uint64_t iid = first_iid + table->size();
  table->emplace(std::string(text), iid);
  pending_[kind].emplace_back(iid, std::string(text));
  return iid;
}

uint64_t SequenceInterner::AnnotationJson(std::string_view text) {
  return Intern(&json_, text, 4, opscope::perfetto::kJsonStringIidBase);
}

void SequenceInterner::Flush(protozero::pbf_writer* packet) {
  static constexpr uint32_t kFields[5] = {
      pi::kEventNames, pi::kEventCategories, pi::kDebugAnnotationNames,
      pi::kDebugAnnotationStringValues, pi::kDebugAnnotationStringValues};
  bool any = false;
  for (const auto& list : pending_) any |= !list.empty();
  if (!any) return;
  protozero::pbf_writer data(*packet, opscope::perfetto::packet::kInternedData);
  for (int kind = 0; kind < 5; ++kind) {
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
