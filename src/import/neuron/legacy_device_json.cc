// A legacy device profile ({"summary": [...], "instruction": [...]}): its instructions staged with
// their device-clock times, then added as one lane per `label` on its NeuronCore (a DMA queue's
// label on a DMA lane, its `bytes` / `size` the transfer's bytes), named by opcode,
// inside the execution that holds them (or one synthesized to span them, as the Parquet reader does
// for a profile without ExecutionInfo).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/neuron/legacy_json.h"

namespace opscope::import::neuron {
namespace {

namespace od = simdjson::ondemand;

// The instruction fields the reader gives a meaning; any other is kept in the slice's args as
// written. Arg names are the Instruction table's field names (the Parquet schema's).
constexpr std::string_view kTimestamp = "timestamp";
constexpr std::string_view kDuration = "duration";
constexpr std::string_view kLabel = "label";
constexpr std::string_view kOpcode = "opcode";
// A transfer's size in bytes, as the neuron_device analysis reads it from a DMA slice's args.
constexpr std::string_view kBytes = "bytes";
constexpr std::string_view kSize = "size";

// A lane the profile names for a DMA queue: "DMA", "DMA queue qSyncIO", "dma_q3" (any case). Not
// documented for this format: the rule reads the timeline row's name as Neuron Explorer's DMA
// rows are named, so that such rows are DMA transfers rather than an engine's instructions.
bool IsDmaLabel(std::string_view label) {
  return label.size() >= 3 && (label[0] == 'D' || label[0] == 'd') &&
         (label[1] == 'M' || label[1] == 'm') && (label[2] == 'A' || label[2] == 'a');
}

// The queue a DMA label names: what follows "DMA" and an optional " queue" and separators; the
// label itself when nothing does. "DMA queue qSyncIO" -> "qSyncIO", "DMA" -> "DMA".
std::string_view DmaQueueOf(std::string_view label) {
  std::string_view rest = label.substr(3);
  const auto skip_separators = [&rest] {
    while (!rest.empty() &&
           (rest[0] == ' ' || rest[0] == '_' || rest[0] == '-' || rest[0] == ':')) {
      rest.remove_prefix(1);
    }
  };
  skip_separators();
  if (rest.substr(0, 5) == "queue" || rest.substr(0, 5) == "Queue") rest.remove_prefix(5);
  skip_separators();
  return rest.empty() ? label : rest;
}

// A count written as a JSON integer or a string of digits ("4096"); -1 for anything else.
int64_t RawCount(std::string_view raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"')
    raw = raw.substr(1, raw.size() - 2);
  int64_t v = -1;
  const auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  return ec == std::errc() && end == raw.data() + raw.size() && v >= 0 ? v : -1;
}

}  // namespace

Status LegacyJsonReader::ParseInstruction(JsonDocument* doc, od::object entry, size_t index,
                                          DeviceProfileJson* out) {
  Trace* trace = builder_->trace();
  DeviceProfileJson::Instruction ins;
  bool has_ts = false, has_dur = false, has_label = false;
  int64_t bytes = -1, size = -1;  // the entry's `bytes` (kept as a number) and `size`
  std::string opcode, found, text;
  JsonWriter args;
  args.BeginObject();
  // The entry's place, spelt out only for an error.
  const auto path = [index] { return fmt::format("instruction[{}]", index); };
  for (auto field : entry) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return doc->Error(path(), "malformed key");
    }
    od::value value;
    if (field.value().get(value) != simdjson::SUCCESS) return doc->Error(path(), "malformed value");
    const auto wrong = [&](std::string_view what) {
      return doc->Error(fmt::format("{}.{}", path(), key),
                        fmt::format("expected {}, found {}", what, found));
    };
    if (key == kTimestamp) {
      if (!JsonInt(value, &ins.ts, &found)) return wrong("an integer (ns)");
      has_ts = true;
    } else if (key == kDuration) {
      if (!JsonInt(value, &ins.dur, &found)) return wrong("an integer (ns)");
      has_dur = true;
    } else if (key == kLabel) {
      if (!JsonText(value, &text, &found)) return wrong("a string");
      ins.lane = trace->Intern(text);
      has_label = true;
    } else if (key == kOpcode) {
      if (!JsonText(value, &opcode, &found)) return wrong("a string");
      args.Field(kOpcode, opcode);
    } else if (options_.keep_args) {
      if (!JsonRaw(value, &text)) return doc->Error(fmt::format("{}.{}", path(), key), "malformed");
      if (key == kSize) size = RawCount(text);
      if (key == kBytes && (bytes = RawCount(text)) >= 0) continue;  // written below, a number
      args.Key(key);
      args.Raw(text);
    }
  }
  // A transfer's bytes as the report reads them: `bytes`, else a DMA entry's `size`.
  if (bytes < 0 && has_label && IsDmaLabel(trace->Str(ins.lane))) bytes = size;
  if (bytes >= 0) args.Field(kBytes, bytes);
  args.EndObject();
  if (!has_ts) return doc->Error(path(), "no 'timestamp' (ns, device clock)");
  if (!has_dur) return doc->Error(path(), "no 'duration' (ns)");
  if (!has_label) return doc->Error(path(), "no 'label' (the engine it ran on)");
  ins.dur = std::max<int64_t>(ins.dur, 0);
  ins.name = trace->Intern(opcode.empty() ? std::string_view("(no opcode)") : opcode);
  if (options_.keep_args &&
      (!options_.keep_args_of ||
       options_.keep_args_of(ActivityKind::kInstruction, trace->Str(ins.name)))) {
    ins.args = trace->AddArgs(args.str());
  }
  out->first_ts = std::min(out->first_ts, ins.ts);
  out->instructions.push_back(ins);
  return Status::Ok();
}

// A summary object: its scalar fields kept as JSON members; nc_idx names the NeuronCore.
Status LegacyJsonReader::ParseSummary(JsonDocument* doc, od::object entry, size_t index,
                                      DeviceProfileJson* out) {
  JsonWriter w;
  w.BeginObject();
  std::string text, found;
  for (auto field : entry) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get(value) != simdjson::SUCCESS) {
      return doc->Error(fmt::format("summary[{}]", index), "malformed member");
    }
    const std::string path = fmt::format("summary[{}].{}", index, key);
    if (key == "nc_idx") {
      int64_t nc = 0;
      if (!JsonInt(value, &nc, &found)) {
        return doc->Error(path, "expected an integer (the NeuronCore), found " + found);
      }
      if (out->nc < 0) out->nc = nc;
      w.Field(key, nc);
      continue;
    }
    if (!JsonRaw(value, &text)) return doc->Error(path, "malformed value");
    w.Key(key);
    w.Raw(text);
  }
  w.EndObject();
  out->summaries.push_back(w.Take());
  return Status::Ok();
}

Status LegacyJsonReader::ParseDevice(JsonDocument* doc, DeviceProfileJson* out) {
  od::object root;
  if (Status st = doc->Root(&root); !st.ok()) return st;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return doc->Error("(top)", "bad key");
    const bool instructions = key == "instruction";
    if (!instructions && key != "summary") {
      ignored_.insert(std::string(key));
      continue;
    }
    const std::string name(key);
    od::array array;
    if (field.value().get_array().get(array) != simdjson::SUCCESS) {
      return doc->Error(name, "expected an array of objects");
    }
    size_t index = 0;
    for (auto element : array) {
      od::object entry;
      if (simdjson::error_code e = element.get_object().get(entry); e != simdjson::SUCCESS) {
        return e == simdjson::INCORRECT_TYPE
                   ? doc->Error(fmt::format("{}[{}]", name, index), "expected an object")
                   : doc->Error(fmt::format("{}[{}]", name, index), e);
      }
      Status st = instructions ? ParseInstruction(doc, entry, index, out)
                               : ParseSummary(doc, entry, index, out);
      if (!st.ok()) return st;
      ++stats_->events;
      ++index;
    }
  }
  return Status::Ok();
}

void LegacyJsonReader::AddDevice(const DeviceProfileJson& profile, uint32_t device,
                                 int64_t offset) {
  Trace* trace = builder_->trace();
  const StringId category = trace->Intern(KinetoCategory(ActivityKind::kInstruction));
  if (!builder_->HasExecutions(device)) builder_->SynthesizedExecution(device);
  std::vector<uint32_t> lanes;  // by lane StringId, filled as lanes appear
  trace->ReserveSlices(trace->slices().size() + profile.instructions.size());
  for (const DeviceProfileJson::Instruction& ins : profile.instructions) {
    Slice s;
    s.ts_ns = internal::SatAdd(ins.ts, offset);
    s.dur_ns = ins.dur;
    s.name = ins.name;
    s.category = category;
    s.kind = ActivityKind::kInstruction;
    if (ins.lane >= lanes.size()) lanes.resize(ins.lane + 1, kNone);
    if (lanes[ins.lane] == kNone) {
      const std::string_view label = trace->Str(ins.lane);
      lanes[ins.lane] = IsDmaLabel(label) ? builder_->DmaTrack(device, 0, DmaQueueOf(label))
                                          : builder_->EngineTrack(device, 0, label, label);
    }
    s.track = lanes[ins.lane];
    s.args = ins.args;
    builder_->CoverActivity(device, s.ts_ns, internal::SatAdd(s.ts_ns, s.dur_ns));
    if (const Execution* e = builder_->FindExecution(device, s.ts_ns)) {
      s.external_id = e->external_id;
    }
    trace->AddSlice(s);
  }
  JsonWriter quoted;
  quoted.String(trace->Str(trace->processes()[builder_->DeviceProcess(device)].name));
  const std::string name = quoted.Take();
  std::string summaries;
  for (const std::string& fields : profile.summaries) {
    // {"device": NAME, <the summary's own fields>}, as the Parquet reader's Summary rows.
    std::string entry = "{\"device\":" + name;
    if (fields.size() > 2) entry += "," + fields.substr(1, fields.size() - 2);
    summaries += (summaries.empty() ? "" : ",") + entry + "}";
  }
  builder_->AppendInfo("summaries", summaries);
}

Status LegacyJsonReader::ReadDeviceFile(JsonDocument* doc) {
  DeviceProfileJson profile;
  Status st = doc->Finish(ParseDevice(doc, &profile));
  if (profile.instructions.empty() && profile.summaries.empty()) return st;
  // Alone, the device clock has no epoch: the trace starts at the first instruction.
  const int64_t first = profile.first_ts == INT64_MAX ? 0 : profile.first_ts;
  builder_->SetBaseTime(first);
  const uint32_t device = builder_->Device("", std::max<int64_t>(profile.nc, 0));
  AddDevice(profile, device, internal::SatSub(0, first));
  return st;
}

}  // namespace opscope::import::neuron
