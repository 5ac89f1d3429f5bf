// XSpace planes into the trace model (see xplane_translator.h for the mapping).
#include "import/xplane/xplane_translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/xplane/xplane_stats.h"

namespace opscope::import::xplane {
namespace {

using internal::SatAdd;
using internal::SatSub;

constexpr int64_t kPsPerNs = 1000;

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

// An event's ends in ns after its line's start, each rounded to the nearest ns (half up), and
// whether either end falls between two ns.
struct EventSpan {
  int64_t begin_ns = 0, end_ns = 0;
  bool sub_ns = false;
};

EventSpan SpanOf(int64_t offset_ps, int64_t duration_ps) {
  const int64_t q0 = FloorDiv(offset_ps, kPsPerNs), r0 = FloorMod(offset_ps, kPsPerNs);
  int64_t q1 = SatAdd(q0, FloorDiv(duration_ps, kPsPerNs));
  int64_t r1 = r0 + FloorMod(duration_ps, kPsPerNs);
  if (r1 >= kPsPerNs) {
    q1 = SatAdd(q1, 1);
    r1 -= kPsPerNs;
  }
  EventSpan span;
  span.begin_ns = SatAdd(q0, r0 * 2 >= kPsPerNs ? 1 : 0);
  span.end_ns = SatAdd(q1, r1 * 2 >= kPsPerNs ? 1 : 0);
  span.sub_ns = r0 != 0 || r1 != 0;
  return span;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

std::string_view LineLabel(const XLineHeader& line) {
  return line.display_name.empty() ? line.name : line.display_name;
}

bool IsDevicePlane(std::string_view name) { return name.starts_with("/device:"); }

// Kernel, memcpy or memset, as the event's stats say (CUPTI's details), else as its name does.
ActivityKind StreamActivityKind(const XPlane& plane, std::span<const XStat> stats,
                                std::span<const XStat> metadata_stats, std::string_view name) {
  if (FindStat(plane, stats, metadata_stats, "memcpy_details") != nullptr) {
    return ActivityKind::kMemcpy;
  }
  if (FindStat(plane, stats, metadata_stats, "Memset_details") != nullptr ||
      FindStat(plane, stats, metadata_stats, "memset_details") != nullptr) {
    return ActivityKind::kMemset;
  }
  if (FindStat(plane, stats, metadata_stats, "kernel_details") != nullptr) {
    return ActivityKind::kKernel;
  }
  if (StartsWithNoCase(name, "memcpy")) return ActivityKind::kMemcpy;
  if (StartsWithNoCase(name, "memset")) return ActivityKind::kMemset;
  return ActivityKind::kKernel;
}

// The Kineto category of a kind, so that a trace written back out as JSON reads the same.
std::string_view CategoryOf(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kRuntime:
      return "cuda_runtime";
    default:
      return KinetoCategory(kind);
  }
}

// The device ordinal a plane name ends in ("/device:GPU:4" -> 4), or -1.
int64_t DeviceOrdinal(std::string_view name) {
  const size_t colon = name.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= name.size()) return -1;
  int64_t v = 0;
  for (char c : name.substr(colon + 1)) {
    if (c < '0' || c > '9' || v > (int64_t{1} << 40)) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

void XSpaceTranslator::SetBaseTime(int64_t base_ns) {
  base_ns_ = base_ns;
  trace_->metadata().base_time_ns = base_ns;
}

std::vector<XSpaceTranslator::LinePlan> XSpaceTranslator::PlanLines(const XPlane& plane,
                                                                    uint32_t process) {
  const bool device = IsDevicePlane(plane.name);
  bool streams = false;
  std::string_view op_line;  // the line that is the op level
  for (const XLineHeader& line : plane.lines) {
    const std::string_view label = LineLabel(line);
    streams = streams || label.starts_with("Stream");
    if (label == "XLA Ops") op_line = label;
  }
  if (op_line.empty()) {
    for (const XLineHeader& line : plane.lines) {
      const std::string_view label = LineLabel(line);
      if (op_line.empty() && (label == "TensorFlow Ops" || label == "Framework Ops")) {
        op_line = label;
      }
    }
  }
  // Ops and modules share one track, so that modules enclose their ops.
  int64_t op_tid = 0;
  bool have_op_tid = false;
  for (const XLineHeader& line : plane.lines) {
    const std::string_view label = LineLabel(line);
    if (streams ? label == op_line : label == "XLA Modules") {
      op_tid = line.id;
      have_op_tid = true;
      break;
    }
  }
  std::vector<LinePlan> plans;
  for (const XLineHeader& line : plane.lines) {
    const std::string_view label = LineLabel(line);
    Role role = Role::kHostThread;
    if (device) {
      if (streams) {
        role = label.starts_with("Stream") ? Role::kStream
               : label == op_line          ? Role::kOps
               : label == "XLA Modules"    ? Role::kModules
                                           : Role::kOther;
      } else {
        role = label == "XLA Ops"       ? Role::kStream
               : label == "XLA Modules" ? Role::kModules
                                        : Role::kOther;
      }
    }
    const bool op_level = role == Role::kOps || role == Role::kModules;
    const int64_t tid = op_level && have_op_tid ? op_tid : line.id;
    const TrackKind kind = role == Role::kStream ? TrackKind::kDeviceStream : TrackKind::kThread;
    const uint32_t track = trace_->FindOrAddTrack(process, tid, {}, kind);
    Track& t = trace_->MutableTrack(track);
    if (t.name == 0) {
      t.name = trace_->Intern(op_level && streams && have_op_tid ? op_line : label);
      t.sort_index = line.index;
    }
    plans.push_back({role, track});
  }
  return plans;
}

Status XSpaceTranslator::AddPlane(const XPlane& plane) {
  bool has_events = false;
  for (const XLineHeader& line : plane.lines) has_events = has_events || !line.message.empty();
  if (!has_events) return Status::Ok();
  const bool device = IsDevicePlane(plane.name);
  // Planes in XSpace order; pids are that order from 1 (XPlane ids repeat: the host's is 0, as
  // is GPU 0's in some profiles).
  const uint32_t process = trace_->AddProcess(plane.index + int64_t{1}, plane.name, device);
  Process& p = trace_->MutableProcess(process);
  p.sort_index = plane.index;
  if (device) {
    p.labels = trace_->Intern(plane.name);
    NoteDeviceProperties(plane);
  }
  const std::vector<LinePlan> plans = PlanLines(plane, process);
  OpIndex index;
  // The op level first, so that device activity finds the op it ran in. A line that fails keeps
  // its events before the failure, and the other lines are still read: the first error is
  // returned.
  Status first;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < plane.lines.size(); ++i) {
      const bool op_level = plans[i].role == Role::kOps || plans[i].role == Role::kModules;
      if (op_level != (pass == 0)) continue;
      Status st = AddLine(plane, plane.lines[i], plans[i], &index);
      if (!st.ok() && first.ok()) first = std::move(st);
    }
    index.Sort();
  }
  return first;
}

Status XSpaceTranslator::AddLine(const XPlane& plane, const XLineHeader& line, const LinePlan& plan,
                                 OpIndex* index) {
  const int64_t line_ns = SatSub(line.timestamp_ns, base_ns_);
  const StringId other_category = trace_->Intern(LineLabel(line));
  std::vector<ArgField> fields;
  return decoder_.ForEachEvent(plane, line, [&](const XEvent& e) {
    ++log_->stats().events;
    if (!e.has_offset) {  // an aggregate (num_occurrences): no time to place it at
      ++aggregates_;
      return true;
    }
    const auto md_it = plane.event_metadata.find(e.metadata_id);
    const XEventMetadata* md = md_it == plane.event_metadata.end() ? nullptr : &md_it->second;
    const std::span<const XStat> md_stats =
        md != nullptr ? std::span<const XStat>(md->stats) : std::span<const XStat>();
    const std::string_view raw_name = md != nullptr ? md->name : std::string_view();
    const std::string_view name =
        md != nullptr && !md->display_name.empty() ? md->display_name : raw_name;
    int64_t duration_ps = e.duration_ps;
    if (duration_ps < 0) {
      log_->Warn(fmt::format("byte {}: plane {} (\"{}\"): line {}: event {}: negative duration_ps "
                             "{}; kept with duration 0",
                             e.offset, plane.index, plane.name, line.index, e.index, duration_ps),
                 false);
      duration_ps = 0;
    }
    const EventSpan span = SpanOf(e.offset_ps, duration_ps);
    Slice s;
    s.ts_ns = SatAdd(line_ns, span.begin_ns);
    s.dur_ns = std::max<int64_t>(0, SatSub(SatAdd(line_ns, span.end_ns), s.ts_ns));
    s.name = trace_->Intern(name.empty() ? fmt::format("event {}", e.metadata_id) : name);
    s.track = plan.track;
    ClassifyEvent(plane, e, md_stats, name, raw_name, plan, index, &s);
    s.category =
        s.kind == ActivityKind::kOther ? other_category : trace_->Intern(CategoryOf(s.kind));
    if (KeepArgs(s.kind, s.name)) {
      fields.clear();
      if (name != raw_name && !raw_name.empty())
        fields.push_back({"long_name", std::string(raw_name)});
      if (span.sub_ns) {
        fields.push_back({"offset_ps", {}, e.offset_ps, true});
        fields.push_back({"duration_ps", {}, duration_ps, true});
      }
      const std::string args = ArgsJson(plane, fields, e.stats, md_stats);
      if (!args.empty()) s.args = trace_->AddArgs(args);
    }
    trace_->AddSlice(s);
    ++log_->stats().slices;
    return true;
  });
}

// The slice's kind, and what its line's role links it to: a stream's kernel to its launch
// (correlation_id) and to the op it ran in, an op or module to the index and an external id.
void XSpaceTranslator::ClassifyEvent(const XPlane& plane, const XEvent& e,
                                     std::span<const XStat> md_stats, std::string_view name,
                                     std::string_view raw_name, const LinePlan& plan,
                                     OpIndex* index, Slice* s) {
  switch (plan.role) {
    case Role::kStream: {
      s->kind = StreamActivityKind(plane, e.stats, md_stats, name);
      if (const XStat* c = FindStat(plane, e.stats, md_stats, "correlation_id")) {
        s->correlation = StatInt(*c).value_or(0);
      }
      const XStat* hlo = FindStat(plane, e.stats, md_stats, "hlo_op");
      s->external_id = index->Find(s->ts_ns, s->ts_ns + s->dur_ns,
                                   hlo != nullptr ? StatText(plane, *hlo) : std::string_view());
      break;
    }
    case Role::kOps:
    case Role::kModules:
      s->kind = ActivityKind::kCpuOp;
      s->external_id = next_external_id_++;
      with_flops_ = with_flops_ || FindStat(plane, e.stats, md_stats, "flops") != nullptr;
      if (plan.role == Role::kOps) {
        index->AddOp({s->ts_ns, s->ts_ns + s->dur_ns, s->external_id, raw_name});
      } else {
        index->AddModule({s->ts_ns, s->ts_ns + s->dur_ns, s->external_id, raw_name});
      }
      break;
    case Role::kOther:
      s->kind = ActivityKind::kOther;
      break;
    case Role::kHostThread:
      s->kind = plane.name == "/host:python-tracer" ? ActivityKind::kPythonFunction
                                                    : ActivityKind::kUserAnnotation;
      if (const XStat* c = FindStat(plane, e.stats, md_stats, "correlation_id")) {
        s->correlation = StatInt(*c).value_or(0);
        if (s->correlation != 0) s->kind = ActivityKind::kRuntime;
      }
      break;
  }
}

bool XSpaceTranslator::KeepArgs(ActivityKind kind, StringId name) {
  if (!options_.keep_args) return false;
  if (!options_.keep_args_of) return true;
  auto [it, added] = keep_args_.try_emplace({static_cast<uint8_t>(kind), name}, false);
  if (added) it->second = options_.keep_args_of(kind, trace_->Str(name));
  return it->second;
}

// Kineto's deviceProperties keys where XPlane's device capability stats mean the same; the
// other plane stats under their own names.
void XSpaceTranslator::NoteDeviceProperties(const XPlane& plane) {
  static constexpr std::pair<std::string_view, std::string_view> kKinetoKeys[] = {
      {"compute_cap_major", "computeMajor"},
      {"compute_cap_minor", "computeMinor"},
      {"core_count", "numSms"},
      {"memory_size", "totalGlobalMem"},
  };
  JsonWriter w;
  w.BeginObject();
  w.Field("id", DeviceOrdinal(plane.name));
  w.Field("plane", plane.name);
  std::string vendor;
  for (const XStat& s : plane.stats) {
    std::string key = StatName(plane, s);
    if (key == "device_vendor") vendor = std::string(StatText(plane, s));
    for (const auto& [xla, kineto] : kKinetoKeys) {
      if (key == xla) key = kineto;
    }
    w.Key(key);
    if (const std::optional<int64_t> v = StatInt(s); v && s.type != XStat::Type::kString) {
      w.Int(*v);
    } else if (s.type == XStat::Type::kDouble) {
      w.Double(s.double_value);
    } else {
      w.String(StatText(plane, s));
    }
  }
  w.EndObject();
  device_properties_.push_back(w.Take());
  if (!device_type_.empty()) return;
  std::string_view kind = std::string_view(plane.name).substr(std::string_view("/device:").size());
  kind = kind.substr(0, kind.find(':'));
  if (kind == "GPU") {
    device_type_ = vendor == "AMD" ? "HIP" : "CUDA";
  } else {
    for (char c : kind)
      device_type_ += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
}

void XSpaceTranslator::Finish(const XSpaceInfo& info) {
  TraceMetadata& md = trace_->metadata();
  md.timeline_rule = DeviceTimelineRule::kXla;
  md.device_type = device_type_;
  for (std::string_view e : info.errors) log_->Warn("XSpace error: " + std::string(e), false);
  for (std::string_view w : info.warnings) log_->Warn("XSpace warning: " + std::string(w), false);
  if (aggregates_ > 0) {
    log_->Warn(
        fmt::format("{} aggregated events (num_occurrences, no start time) left out", aggregates_),
        false);
  }
  if (!info.hostnames.empty()) {
    md.trace_name = std::string(info.hostnames.front());
    JsonWriter w;
    w.BeginArray();
    for (std::string_view h : info.hostnames) w.String(h);
    w.EndArray();
    md.extra.emplace_back("hostnames", w.Take());
  }
  // XLA's cost analysis gives ops their FLOPs (a "flops" stat): key_averages shows them as it
  // does a trace recorded with_flops.
  if (with_flops_) md.extra.emplace_back("with_flops", "true");
  if (!device_properties_.empty()) {
    std::string props = "[";
    for (size_t i = 0; i < device_properties_.size(); ++i) {
      if (i > 0) props += ", ";
      props += device_properties_[i];
    }
    md.extra.emplace_back("deviceProperties", props + "]");
  }
}

}  // namespace opscope::import::xplane
