// The legacy JSON reader's entry point and its plumbing (legacy_json.h): which files and folders
// are legacy Neuron JSON, a document's parse and the places its errors name, and the scalars as the
// profiler writes them (numbers, or strings of numbers).
#include "import/neuron/legacy_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "import/neuron/neuron_reader.h"

namespace opscope::import::neuron {
namespace {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;

// How many times a document that does not parse whole is retried, each time cut after an earlier
// '}' (a truncated file keeps its complete entries).
constexpr int kCutRetries = 16;

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Found(od::value value) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return "a malformed value";
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
    case od::json_type::string:
      return "a string that is not a number";
    case od::json_type::number:
      return "a number";
  }
  return "a value";
}

// A top-level key of a JSON object and the first character of its value.
struct TopLevelKey {
  std::string_view key;
  char value = 0;
};

// The top-level keys of a JSON object's first bytes, in order, up to the end of `head` or up to
// and including `last` (a Kineto trace's "traceEvents": its array fills the rest of the head, and
// walking it byte by byte cost every report of a Chrome trace a millisecond for nothing).
std::vector<TopLevelKey> TopLevelKeys(std::string_view head, std::string_view last = {}) {
  std::vector<TopLevelKey> keys;
  size_t i = 0;
  if (head.size() >= 3 && head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i >= head.size() || head[i] != '{') return keys;
  int depth = 0;
  for (; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '"') {
      const size_t start = ++i;
      while (i < head.size() && head[i] != '"') i += head[i] == '\\' ? 2 : 1;
      if (i >= head.size()) break;
      if (depth == 1) {
        size_t j = i + 1;
        while (j < head.size() && std::isspace(static_cast<unsigned char>(head[j]))) ++j;
        if (j < head.size() && head[j] == ':') {
          ++j;
          while (j < head.size() && std::isspace(static_cast<unsigned char>(head[j]))) ++j;
          keys.push_back({head.substr(start, i - start), j < head.size() ? head[j] : '\0'});
          if (!last.empty() && keys.back().key == last) break;
        }
      }
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth <= 0) break;
    }
  }
  return keys;
}

bool IsDeviceProfileName(const std::string& name) {
  return name.size() > kDeviceProfilePrefix.size() + 5 &&
         name.compare(0, kDeviceProfilePrefix.size(), kDeviceProfilePrefix) == 0 &&
         name.compare(name.size() - 5, 5, ".json") == 0;
}

// The device_profile_model_<id>.json files of `dir`, in name order.
std::vector<std::string> DeviceFilesIn(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsDeviceProfileName(it->path().filename().string()) && it->is_regular_file(ec)) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Status ReadJsonFile(const std::string& path, std::string* out) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
    return Status::IoError(fs::path(path).filename().string() + ": cannot be read", path);
  }
  out->assign(text.data(), text.size());
  return Status::Ok();
}

JsonDocument::JsonDocument(std::string_view bytes, std::string file)
    : file_(std::move(file)), size_(bytes.size()), text_(bytes.data(), bytes.size()) {}

uint64_t JsonDocument::Offset() {
  const char* at = nullptr;
  if (doc_.current_location().get(at) != simdjson::SUCCESS || at < text_.data()) return size_;
  return std::min<uint64_t>(static_cast<uint64_t>(at - text_.data()), size_);
}

Status JsonDocument::Error(std::string_view path, std::string_view what) {
  const uint64_t at = Offset();
  const std::string where = file_.empty() ? "" : fs::path(file_).filename().string() + ": ";
  return Status::InvalidInput(fmt::format("{}byte {}: {}: {}", where, at, path, what), at, file_);
}

Status JsonDocument::Error(std::string_view path, simdjson::error_code code) {
  return Error(path, std::string("malformed JSON (") + simdjson::error_message(code) + ")");
}

Status JsonDocument::Root(od::object* root) {
  size_t len = text_.size();
  simdjson::error_code first = simdjson::SUCCESS;
  for (int attempt = 0; attempt <= kCutRetries; ++attempt) {
    const simdjson::padded_string_view view(text_.data(), len,
                                            text_.size() + simdjson::SIMDJSON_PADDING);
    simdjson::error_code code = parser_.iterate(view).get(doc_);
    if (code == simdjson::SUCCESS) code = doc_.get_object().get(*root);
    if (code == simdjson::SUCCESS) break;
    if (first == simdjson::SUCCESS) first = code;
    const size_t cut =
        len == 0 ? std::string_view::npos : std::string_view(text_.data(), len - 1).rfind('}');
    if (cut == std::string_view::npos || attempt == kCutRetries) {
      const std::string what =
          first == simdjson::TAPE_ERROR || first == simdjson::INCORRECT_TYPE
              ? "expected a JSON object (a Neuron profile)"
              : std::string("malformed JSON (") + simdjson::error_message(first) + ")";
      const std::string where = file_.empty() ? "" : fs::path(file_).filename().string() + ": ";
      return Status::InvalidInput(fmt::format("{}byte 0: {}", where, what), 0, file_);
    }
    len = cut + 1;
  }
  if (first != simdjson::SUCCESS) {
    const std::string where = file_.empty() ? "" : fs::path(file_).filename().string() + ": ";
    cut_ = Status::InvalidInput(
        fmt::format("{}byte {}: the JSON ends early or is malformed after byte {} ({}); the "
                    "entries before it were read",
                    where, len, len, simdjson::error_message(first)),
        len, file_);
  }
  return Status::Ok();
}

Status JsonDocument::Finish(Status st) { return cut_.ok() ? st : cut_; }

bool JsonInt(od::value value, int64_t* out, std::string* found) {
  od::json_type type = od::json_type::null;
  if (value.type().get(type) != simdjson::SUCCESS) {
    *found = "a malformed value";
    return false;
  }
  if (type == od::json_type::number) {
    od::number n;
    if (value.get_number().get(n) == simdjson::SUCCESS) {
      if (n.is_int64()) {
        *out = n.get_int64();
        return true;
      }
      const double d = n.as_double();
      if (std::isfinite(d) && std::fabs(d) < 9.2e18) {
        *out = std::llround(d);
        return true;
      }
    }
    *found = "a number out of range";
    return false;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) == simdjson::SUCCESS) {
      s = Trim(s);
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return true;
      double d = 0;
      const auto [dend, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (dec == std::errc() && dend == s.data() + s.size() && std::isfinite(d) &&
          std::fabs(d) < 9.2e18) {
        *out = std::llround(d);
        return true;
      }
    }
    *found = "a string that is not a number";
    return false;
  }
  *found = Found(value);
  return false;
}

bool JsonDouble(od::value value, double* out, std::string* found) {
  od::json_type type = od::json_type::null;
  if (value.type().get(type) != simdjson::SUCCESS) {
    *found = "a malformed value";
    return false;
  }
  if (type == od::json_type::number) {
    if (value.get_double().get(*out) == simdjson::SUCCESS) return true;
    *found = "a malformed number";
    return false;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) == simdjson::SUCCESS) {
      s = Trim(s);
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return true;
    }
    *found = "a string that is not a number";
    return false;
  }
  *found = Found(value);
  return false;
}

bool JsonText(od::value value, std::string* out, std::string* found) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) {
    *found = "a malformed value";
    return false;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) == simdjson::SUCCESS) {
      out->assign(s);
      return true;
    }
    *found = "a malformed string";
    return false;
  }
  if (type == od::json_type::number) {
    out->assign(Trim(value.raw_json_token()));
    return true;
  }
  *found = Found(value);
  return false;
}

bool JsonRaw(od::value value, std::string* out) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return false;
  std::string_view raw;
  if (type == od::json_type::object) {
    od::object o;
    if (value.get_object().get(o) != simdjson::SUCCESS || o.raw_json().get(raw)) return false;
  } else if (type == od::json_type::array) {
    od::array a;
    if (value.get_array().get(a) != simdjson::SUCCESS || a.raw_json().get(raw)) return false;
  } else {
    raw = Trim(value.raw_json_token());
    // A scalar token is validated only when read: check it now, as it goes into args as it is.
    if (type == od::json_type::string) {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return false;
    } else if (type == od::json_type::number) {
      double d;
      if (value.get_double().get(d) != simdjson::SUCCESS) return false;
    } else if (type == od::json_type::boolean) {
      bool b;
      if (value.get_bool().get(b) != simdjson::SUCCESS) return false;
    } else {
      bool null = false;
      if (value.is_null().get(null) != simdjson::SUCCESS || !null) return false;
    }
  }
  out->assign(Trim(raw));
  return true;
}

// A key claims the document only with the value the documentation gives it: an array (or, for
// trace_events, an object of named events). `summary` alone claims nothing: other JSON documents
// name a summary too; a device profile's `instruction` array follows its short summary.
LegacyJsonKind LegacyJsonKindOf(std::string_view head) {
  const std::vector<TopLevelKey> keys = TopLevelKeys(head, "traceEvents");
  for (const TopLevelKey& k : keys) {
    if (k.key == "traceEvents") return LegacyJsonKind::kNone;  // a Chrome / Kineto trace
  }
  for (const TopLevelKey& k : keys) {
    const bool array = k.value == '[' || k.value == '\0';  // '\0': the head ends there
    if ((k.key == "trace_events" && (array || k.value == '{')) ||
        ((k.key == "mem_usage" || k.key == "cpu_util") && array)) {
      return LegacyJsonKind::kSystem;
    }
    if (k.key == "instruction" && array) return LegacyJsonKind::kDevice;
  }
  return LegacyJsonKind::kNone;
}

bool LooksLikeNeuronJson(std::string_view head) {
  return LegacyJsonKindOf(head) != LegacyJsonKind::kNone;
}

bool IsNeuronJsonDir(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(path) / kSystemProfileFile, ec)) return true;
  return !DeviceFilesIn(path).empty();
}

LegacyJsonReader::LegacyJsonReader(NeuronTraceBuilder* builder, ExplorerProfile* profile,
                                   ImportStats* stats, const ImportOptions& options)
    : builder_(builder), profile_(profile), stats_(stats), options_(options) {
  part_ok_ = ParsePart(options.part, &filter_);
}

void LegacyJsonReader::WarnIgnored() {
  if (ignored_.empty()) return;
  std::string keys;
  for (const std::string& k : ignored_) keys += (keys.empty() ? "" : ", ") + k;
  profile_->Warn(
      fmt::format("{} top-level keys the legacy Neuron JSON documentation does not "
                  "name were ignored: {}",
                  ignored_.size(), keys));
}

namespace {

// A folder: its system_profile.json with the device profiles beside it, else the device profiles
// alone, each on its own clock.
Status ReadFolder(LegacyJsonReader* reader, const std::string& dir, ImportStats* stats) {
  const std::vector<std::string> devices = DeviceFilesIn(dir);
  const std::string system = (fs::path(dir) / kSystemProfileFile).string();
  std::error_code ec;
  if (fs::is_regular_file(system, ec)) {
    std::string text;
    if (Status st = ReadJsonFile(system, &text); !st.ok()) return st;
    stats->input_bytes += text.size();
    stats->json_bytes += text.size();
    JsonDocument doc(text, system);
    return reader->ReadSystem(&doc, devices);
  }
  for (const std::string& f : devices) {
    std::string text;
    if (Status st = ReadJsonFile(f, &text); !st.ok()) return st;
    stats->input_bytes += text.size();
    stats->json_bytes += text.size();
    JsonDocument doc(text, f);
    if (Status st = reader->ReadDeviceFile(&doc); !st.ok()) return st;
  }
  return Status::Ok();
}

Status ReadInput(LegacyJsonReader* reader, ImportInput* in, ImportStats* stats) {
  if (in->is_directory()) return ReadFolder(reader, in->path(), stats);
  std::string_view bytes;
  if (Status st = in->ReadAll(&bytes); !st.ok()) return st;
  stats->input_bytes = in->stored_bytes() != 0 ? in->stored_bytes() : bytes.size();
  stats->json_bytes = bytes.size();
  JsonDocument doc(bytes, "");
  if (LegacyJsonKindOf(in->head()) != LegacyJsonKind::kSystem) return reader->ReadDeviceFile(&doc);
  // system_profile.json given as a file: its device profiles are the files beside it.
  std::vector<std::string> devices;
  if (!in->path().empty()) {
    devices = DeviceFilesIn(fs::path(in->path()).parent_path().empty()
                                ? std::string(".")
                                : fs::path(in->path()).parent_path().string());
  }
  return reader->ReadSystem(&doc, devices);
}

}  // namespace

namespace {

// The import around a read: the trace built, warned, finished and finalized whatever `read` says.
template <typename Read>
Status RunRead(Trace* out, ImportStats* stats, const ImportOptions& options, Read read) {
  NeuronTraceBuilder builder(out);
  ExplorerProfile profile(&builder, stats, options);
  LegacyJsonReader reader(&builder, &profile, stats, options);
  Status st = reader.part_ok() ? read(&reader)
                               : Status::InvalidArgument("ImportOptions::part '" + options.part +
                                                         "' is not INSTANCE or INSTANCE/PID");
  reader.WarnIgnored();
  builder.SetBaseTime(0);  // a profile that held no time at all
  builder.SetInfo("source_format", "\"neuron-json\"");
  builder.Finish();
  stats->slices = out->slices().size();
  stats->counters = out->counters().size();
  out->Finalize(profile.threads());
  return st;
}

}  // namespace

Status ReadNeuronJson(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options) {
  return RunRead(out, stats, options,
                 [&](LegacyJsonReader* reader) { return ReadInput(reader, in, stats); });
}

Status ListNeuronJsonParts(const std::string& path, std::vector<std::string>* parts) {
  parts->clear();
  std::error_code ec;
  std::string system = path;
  if (fs::is_directory(path, ec)) {
    system = (fs::path(path) / kSystemProfileFile).string();
    if (!fs::is_regular_file(system, ec)) return Status::Ok();  // device profiles alone
  }
  std::string text;
  if (Status st = ReadJsonFile(system, &text); !st.ok()) return st;
  if (LegacyJsonKindOf(std::string_view(text).substr(0, ImportInput::kHeadBytes)) !=
      LegacyJsonKind::kSystem) {
    return Status::Ok();
  }
  ScratchProfile scratch;
  LegacyJsonReader reader(&scratch.builder, &scratch.profile, &scratch.stats, scratch.options);
  JsonDocument doc(text, system);
  std::set<std::string> instances;
  const Status st = reader.ListInstances(&doc, &instances);
  parts->assign(instances.begin(), instances.end());
  return st;
}

Status ReadNeuronJsonBytes(std::string_view bytes, Trace* out, ImportStats* stats,
                           const ImportOptions& options) {
  return RunRead(out, stats, options, [&](LegacyJsonReader* reader) {
    stats->input_bytes = stats->json_bytes = bytes.size();
    JsonDocument doc(bytes, "");
    return LegacyJsonKindOf(bytes) == LegacyJsonKind::kSystem ? reader->ReadSystem(&doc, {})
                                                              : reader->ReadDeviceFile(&doc);
  });
}

}  // namespace opscope::import::neuron
