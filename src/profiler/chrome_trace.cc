// Kineto-compatible chrome trace JSON of the trace model (chrome_trace.h).
#include "profiler/chrome_trace.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "base/json_escape.h"
#include "opscope/export.h"

namespace opscope::internal {
namespace {

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

// Relative ns as Kineto's microseconds with exactly three decimals.
void AppendUs(std::string& out, int64_t ns) {
  if (ns < 0) ns = 0;
  AppendInt(out, ns / 1000);
  const int frac = static_cast<int>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

void AppendPid(std::string& out, const Process& p) {
  if (!p.pid_text.empty()) {
    AppendJsonString(out, p.pid_text);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", p.pid);
  }
}

void AppendTid(std::string& out, const Track& t) {
  if (!t.tid_text.empty()) {
    AppendJsonString(out, t.tid_text);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", t.tid);
  }
}

void AppendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  fmt::format_to(std::back_inserter(out), "{}", v);
}

class Writer {
 public:
  Writer(const Trace& trace, std::string& out)
      : trace_(trace),
        out_(out),
        escaped_(trace.strings().size()),
        pid_tid_(trace.tracks().size()) {}

  // The quoted, escaped text of a string id; computed once per id.
  const std::string& Quoted(StringId id) {
    std::string& q = escaped_[id];
    if (q.empty()) AppendJsonString(q, trace_.Str(id));
    return q;
  }

  void PidTid(uint32_t track) {
    std::string& text = pid_tid_[track];
    if (text.empty()) {
      const Track& t = trace_.tracks()[track];
      text = "\"pid\": ";
      AppendPid(text, trace_.processes()[t.process]);
      text += ", \"tid\": ";
      AppendTid(text, t);
    }
    out_ += text;
  }

  void BeginEvent() {
    if (!first_) out_ += ",";
    first_ = false;
    out_ += "\n  {";
  }

  void Metadata(std::string_view name, const Process& p, const Track* t, std::string_view key,
                const std::string& value_json) {
    BeginEvent();
    out_ += "\"name\": \"";
    out_ += name;
    out_ += "\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": ";
    AppendPid(out_, p);
    out_ += ", \"tid\": ";
    if (t != nullptr) {
      AppendTid(out_, *t);
    } else {
      out_ += "0";
    }
    out_ += ", \"args\": {\"";
    out_ += key;
    out_ += "\": ";
    out_ += value_json;
    out_ += "}}";
  }

  void Slice(const opscope::Slice& s) {
    BeginEvent();
    out_ += "\"ph\": \"X\", \"cat\": ";
    if (s.category != 0) {
      out_ += Quoted(s.category);
    } else {
      AppendJsonString(out_, KinetoCategory(s.kind));
    }
    out_ += ", \"name\": ";
    out_ += Quoted(s.name);
    out_ += ", ";
    PidTid(s.track);
    out_ += ", \"ts\": ";
    AppendUs(out_, s.ts_ns);
    out_ += ", \"dur\": ";
    AppendUs(out_, s.dur_ns);
    if (s.args != kNone) {
      out_ += ", \"args\": ";
      out_ += trace_.ArgsJson(s.args);
    }
    out_ += "}";
  }

  void Instant(const opscope::Instant& i) {
    BeginEvent();
    out_ += "\"ph\": \"i\", \"s\": \"";
    out_ += (i.scope == 'g' || i.scope == 'p') ? i.scope : 't';
    out_ += "\", \"cat\": ";
    AppendJsonString(out_, i.category != 0 ? trace_.Str(i.category) : "cpu_instant_event");
    out_ += ", \"name\": ";
    AppendJsonString(out_, trace_.Str(i.name));
    out_ += ", ";
    PidTid(i.track);
    out_ += ", \"ts\": ";
    AppendUs(out_, i.ts_ns);
    if (i.args != kNone) {
      out_ += ", \"args\": ";
      out_ += trace_.ArgsJson(i.args);
    }
    out_ += "}";
  }

  void Counter(const CounterSample& c) {
    const Track& t = trace_.tracks()[c.track];
    BeginEvent();
    out_ += "\"ph\": \"C\", \"name\": ";
    AppendJsonString(out_, trace_.Str(t.name));
    out_ += ", \"pid\": ";
    AppendPid(out_, trace_.processes()[t.process]);
    out_ += ", \"ts\": ";
    AppendUs(out_, c.ts_ns);
    out_ += ", \"args\": {";
    AppendJsonString(out_, trace_.Str(t.name));
    out_ += ": ";
    AppendNumber(out_, c.value);
    out_ += "}}";
  }

  void FlowEnd(const Flow& f, bool start) {
    const opscope::Slice& s = trace_.slices()[start ? f.from : f.to];
    BeginEvent();
    out_ += start ? "\"ph\": \"s\"" : "\"ph\": \"f\"";
    fmt::format_to(std::back_inserter(out_), ", \"id\": {}, ", f.id);
    PidTid(s.track);
    out_ += ", \"ts\": ";
    AppendUs(out_, s.ts_ns);
    out_ += ", \"cat\": ";
    AppendJsonString(out_, f.category != 0 ? trace_.Str(f.category) : "ac2g");
    out_ += ", \"name\": ";
    AppendJsonString(out_, f.name != 0 ? trace_.Str(f.name) : "ac2g");
    if (!start) out_ += ", \"bp\": \"e\"";
    out_ += "}";
  }

 private:
  const Trace& trace_;
  std::string& out_;
  std::vector<std::string> escaped_;
  std::vector<std::string> pid_tid_;
  bool first_ = true;
};

}  // namespace

std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name) {
  const TraceMetadata& meta = trace.metadata();
  std::string out;
  out.reserve(256 + trace.slices().size() * 200);
  fmt::format_to(std::back_inserter(out), "{{\n  \"schemaVersion\": {},\n", meta.schema_version);
  bool have_device_properties = false;
  for (const auto& [key, value] : meta.extra) have_device_properties |= key == "deviceProperties";
  if (!have_device_properties) out += "  \"deviceProperties\": [],\n";
  for (const auto& [key, value] : meta.extra) {
    out += "  ";
    AppendJsonString(out, key);
    out += ": ";
    out += value;
    out += ",\n";
  }
  if (!meta.dropped.empty()) {
    out += "  \"droppedEvents\": {";
    for (size_t i = 0; i < meta.dropped.size(); ++i) {
      if (i > 0) out += ", ";
      AppendJsonString(out, meta.dropped[i].first);
      fmt::format_to(std::back_inserter(out), ": {}", meta.dropped[i].second);
    }
    out += "},\n";
  }
  if (!meta.device_type.empty()) {
    out += "  \"deviceType\": ";
    AppendJsonString(out, meta.device_type);
    out += ",\n";
  }
  fmt::format_to(
      std::back_inserter(out),
      "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {},\n  \"traceEvents\": [",
      meta.base_time_ns);

  Writer w(trace, out);
  for (const Process& p : trace.processes()) {
    w.Metadata("process_name", p, nullptr, "name", JsonString(trace.Str(p.name)));
    if (p.labels != 0)
      w.Metadata("process_labels", p, nullptr, "labels", JsonString(trace.Str(p.labels)));
    w.Metadata("process_sort_index", p, nullptr, "sort_index", std::to_string(p.sort_index));
  }
  for (const Track& t : trace.tracks()) {
    if (t.kind == TrackKind::kCounter) continue;
    const Process& p = trace.processes()[t.process];
    w.Metadata("thread_name", p, &t, "name", JsonString(trace.Str(t.name)));
    w.Metadata("thread_sort_index", p, &t, "sort_index", std::to_string(t.sort_index));
  }
  for (const Slice& s : trace.slices()) w.Slice(s);
  for (const Instant& i : trace.instants()) w.Instant(i);
  for (const CounterSample& c : trace.counters()) w.Counter(c);
  for (const Flow& f : trace.flows()) {
    if (f.from == kNone || f.to == kNone) continue;
    w.FlowEnd(f, /*start=*/true);
    w.FlowEnd(f, /*start=*/false);
  }
  out += "\n  ],\n  \"traceName\": ";
  AppendJsonString(out, trace_name);
  out += "\n}\n";
  return out;
}

Status WriteChromeTrace(const Trace& trace, const std::string& path) {
  return WriteTraceFile(path, internal::ChromeTraceJson(trace, path),
                        path.size() > 3 && path.ends_with(".gz"), "chrome trace");
}

}  // namespace opscope::internal

namespace opscope {

std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name) {
  return internal::ChromeTraceJson(trace, trace_name);
}

Status WriteChromeTrace(const Trace& trace, const std::string& path) {
  // An imported trace keeps its own traceName; a recorded one is named by its file.
  const std::string& name =
      trace.metadata().trace_name.empty() ? path : trace.metadata().trace_name;
  return internal::WriteTraceFile(path, internal::ChromeTraceJson(trace, name),
                                  path.size() > 3 && path.ends_with(".gz"), "chrome trace");
}

std::string JsonQuote(std::string_view text) { return internal::JsonString(text); }

}  // namespace opscope
