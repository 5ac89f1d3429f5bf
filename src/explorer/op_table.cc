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

void WriteOpTable(const Trace& trace, bool group_by_input_shape, JsonWriter* w) {
  const KeyAverages avg =
      KeyAverages::FromTrace(trace, {.group_by_input_shape = group_by_input_shape});
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
    w->Field("user_annotation", r.is_user_annotation);
    w->Field("count", r.count);
    w->Field("self_cpu_ns", r.self_cpu_time_total_ns);
    w->Field("cpu_total_ns", r.cpu_time_total_ns);
    w->Field("self_device_ns", r.self_device_time_total_ns);
    w->Field("device_total_ns", r.device_time_total_ns);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

namespace {

void WriteTimeline(const DeviceTimeline& t, JsonWriter* w) {
  w->BeginObject();
  w->Field("total_ns", t.total_ns);
  w->Field("busy_ns", t.busy_ns);
  w->Field("idle_ns", t.idle_ns);
  w->Field("activities", t.activities);
  w->EndObject();
}

}  // namespace

void WriteDiff(const Trace& a, const Trace& b, JsonWriter* w) {
  const TraceDiff diff = DiffTraces(a, b);
  w->BeginObject();
  w->Key("rows");
  w->BeginArray();
  for (const OpDiff& r : diff.rows) {
    w->BeginObject();
    w->Field("name", r.name);
    w->Field("change", ToString(r.change));
    w->Field("calls_a", r.calls_a);
    w->Field("calls_b", r.calls_b);
    w->Field("cpu_ns_a", r.cpu_ns_a);
    w->Field("cpu_ns_b", r.cpu_ns_b);
    w->Field("device_ns_a", r.device_ns_a);
    w->Field("device_ns_b", r.device_ns_b);
    w->Field("impact_ns", r.impact_ns());
    w->EndObject();
  }
  w->EndArray();
  w->Key("timeline_a");
  WriteTimeline(diff.timeline_a, w);
  w->Key("timeline_b");
  WriteTimeline(diff.timeline_b, w);
  w->EndObject();
}

}  // namespace opscope::explorer
