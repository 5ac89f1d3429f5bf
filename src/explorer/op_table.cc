// The op table of a trace or a time range (op_table.h), aggregated over the index.
#include "explorer/op_table.h"

#include <vector>

#include "opscope/analysis.h"
#include "opscope/key_averages.h"

namespace opscope::explorer {

Trace SliceTimeRange(const Trace& trace, int64_t t0_ns, int64_t t1_ns) {
  Trace out;
  out.metadata().device_type = trace.metadata().device_type;
  out.metadata().base_time_ns = trace.metadata().base_time_ns;
  for (const Process& p : trace.processes()) {
    out.AddProcess(p.pid, trace.Str(p.name), p.is_device);
  }
  for (const Track& t : trace.tracks()) {
    out.AddThreadTrack(t.process, t.tid, trace.Str(t.name), t.kind);
  }
  const auto& slices = trace.slices();
  std::vector<uint32_t> new_index(slices.size(), kNone);
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (s.ts_ns >= t1_ns || s.ts_ns + s.dur_ns < t0_ns) continue;
    Slice c = s;
    c.name = out.Intern(trace.Str(s.name));
    c.category = out.Intern(trace.Str(s.category));
    c.input_shapes = s.input_shapes ? out.Intern(trace.Str(s.input_shapes)) : 0;
    c.args = s.args == kNone ? kNone : out.AddArgs(trace.ArgsJson(s.args));
    c.parent = kNone;
    c.depth = 0;
    c.lane = 0;
    new_index[i] = out.AddSlice(c);
  }
  for (const Flow& f : trace.flows()) {
    if (f.from >= slices.size() || f.to >= slices.size()) continue;
    if (new_index[f.from] == kNone || new_index[f.to] == kNone) continue;
    Flow c = f;
    c.category = out.Intern(trace.Str(f.category));
    c.name = out.Intern(trace.Str(f.name));
    c.from = new_index[f.from];
    c.to = new_index[f.to];
    out.AddFlow(c);
  }
  out.Finalize();
  return out;
}

namespace {

// What a key_averages row is, for the op table's kind column: "cpu op", "runtime", "kernel",
// "memcpy", "memset", "annotation" or "device annotation" (a step range on the device timeline).
class RowKinds {
 public:
  explicit RowKinds(const Trace& trace) : trace_(trace) {
    host_.assign(trace.strings().size(), kUnset);
    device_.assign(trace.strings().size(), kUnset);
    for (const Slice& s : trace.slices()) {
      auto& slot = IsDeviceActivity(s.kind) ? device_[s.name] : host_[s.name];
      if (slot == kUnset) slot = static_cast<uint8_t>(s.kind);
    }
  }

  std::string_view Of(const KeyAverage& r) const {
    if (r.is_user_annotation) return r.is_device ? "device annotation" : "annotation";
    const StringId id = trace_.strings().Find(r.key);
    const uint8_t k = id == kNone ? kUnset : (r.is_device ? device_ : host_)[id];
    switch (static_cast<ActivityKind>(k)) {
      case ActivityKind::kRuntime:
      case ActivityKind::kDriver:
        return "runtime";
      case ActivityKind::kKernel:
        return "kernel";
      case ActivityKind::kMemcpy:
        return "memcpy";
      case ActivityKind::kMemset:
        return "memset";
      default:
        return r.is_device ? "kernel" : "cpu op";
    }
  }

 private:
  static constexpr uint8_t kUnset = 0xff;
  const Trace& trace_;
  std::vector<uint8_t> host_, device_;  // by name: the kind of its first host / device slice
};

}  // namespace

void WriteOpTable(const Trace& trace, bool group_by_input_shape, JsonWriter* w,
                  const std::vector<uint32_t>* subset) {
  const KeyAveragesOptions options{.group_by_input_shape = group_by_input_shape};
  const KeyAverages avg = subset != nullptr ? KeyAverages::FromSlices(trace, *subset, options)
                                            : KeyAverages::FromTrace(trace, options);
  const RowKinds kinds(trace);
  w->BeginObject();
  w->Field("device", avg.device_name());
  w->Field("has_device_time", avg.has_device_time());
  w->Field("grouped_by_input_shape", group_by_input_shape);
  w->Key("rows");
  w->BeginArray();
  for (const KeyAverage& r : avg.rows()) {
    w->BeginObject();
    w->Field("name", r.key);
    w->Field("input_shapes", r.input_shapes);
    w->Field("kind", kinds.Of(r));
    w->Field("user_annotation", r.is_user_annotation);
    w->Field("is_device", r.is_device);
    w->Field("count", r.count);
    w->Field("self_cpu_ns", r.self_cpu_time_total_ns);
    w->Field("cpu_total_ns", r.cpu_time_total_ns);
    w->Field("self_device_ns", r.self_device_time_total_ns);
    w->Field("device_total_ns", r.device_time_total_ns);
    // key_averages groups every "ProfilerStep#N" into one "ProfilerStep*" row: no event bears that
    // name, so the page finds the row's events by this regular expression.
    if (r.key == "ProfilerStep*") w->Field("search", "^ProfilerStep#");
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteDiff(const Trace& a, const Trace& b, JsonWriter* w) { w->Raw(DiffTraces(a, b).ToJson()); }

}  // namespace opscope::explorer
