// Answers about traces not served yet (load_status.h): loading progress and load errors.
#include "explorer/load_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace opscope::explorer {
namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

std::string_view LoadPhaseKey(LoadPhase phase) {
  switch (phase) {
    case LoadPhase::kQueued:
      return "queued";
    case LoadPhase::kImporting:
      return "importing";
    case LoadPhase::kIndexing:
      return "indexing";
    case LoadPhase::kReady:
      return "ready";
    case LoadPhase::kFailed:
      return "failed";
  }
  return "ready";
}

TraceUnavailable::TraceUnavailable(const LoadedTrace& trace, size_t index) : index_(index) {
  const LoadPhase phase = trace.phase.load(std::memory_order_acquire);
  phase_ = LoadPhaseKey(phase);
  if (phase == LoadPhase::kFailed) {
    failed_ = true;
    file_ = trace.source.empty() ? trace.name : trace.source;
    offset_ = trace.error_offset;
    // The importer's message names the file and the byte offset already.
    message_ = fmt::format("trace {} ({}) could not be opened: {}", index, file_, trace.error);
    return;
  }
  const uint64_t total = trace.bytes_total.load(std::memory_order_relaxed);
  const uint64_t read = trace.bytes_read.load(std::memory_order_relaxed);
  const std::string done =
      phase == LoadPhase::kImporting && total > 0
          ? fmt::format(", {:.0f}% read", 100.0 * static_cast<double>(read) / total)
          : "";
  message_ = fmt::format("trace {} ({}) is still loading ({}{}); retry shortly", index, trace.name,
                         phase_, done);
}

void TraceUnavailable::Answer(HttpResponse& res) const {
  JsonWriter w;
  w.BeginObject();
  w.Field("error", message_);
  w.Field("status", failed_ ? 422 : 503);
  w.Field("trace", static_cast<uint64_t>(index_));
  if (failed_) {
    w.Field("failed", true);
    w.Field("file", file_);
    w.Field("offset", offset_);
  } else {
    w.Field("loading", true);
    w.Field("phase", phase_);
  }
  w.EndObject();
  res.status = failed_ ? 422 : 503;
  res.SetHeader("Cache-Control", "no-store");
  if (!failed_) res.SetHeader("Retry-After", "1");
  res.content_type = "application/json; charset=utf-8";
  res.body = w.Take();
}

void SetLoadingError(HttpResponse& res, std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Field("error", message);
  w.Field("status", 503);
  w.Field("loading", true);
  w.EndObject();
  res.status = 503;
  res.SetHeader("Cache-Control", "no-store");
  res.SetHeader("Retry-After", "1");
  res.content_type = "application/json; charset=utf-8";
  res.body = w.Take();
}

bool AllLoaded(const std::vector<std::unique_ptr<LoadedTrace>>& traces) {
  for (const auto& t : traces) {
    const LoadPhase phase = t->phase.load(std::memory_order_acquire);
    if (phase != LoadPhase::kReady && phase != LoadPhase::kFailed) return false;
  }
  return true;
}

void WriteLoadStatus(const std::vector<std::unique_ptr<LoadedTrace>>& traces, std::string_view job,
                     JsonWriter* w) {
  w->BeginObject();
  w->Field("ready", AllLoaded(traces));
  w->Field("job", job);
  w->Key("traces");
  w->BeginArray();
  for (size_t i = 0; i < traces.size(); ++i) {
    const LoadedTrace& t = *traces[i];
    const LoadPhase phase = t.phase.load(std::memory_order_acquire);
    const uint64_t read = t.bytes_read.load(std::memory_order_relaxed);
    const uint64_t total = t.bytes_total.load(std::memory_order_relaxed);
    const int64_t begin_ns = t.import_begin_ns.load(std::memory_order_relaxed);
    const int64_t end_ns = t.import_end_ns.load(std::memory_order_relaxed);
    const int64_t done_ns = t.done_ns.load(std::memory_order_relaxed);
    const int64_t since_ns = done_ns >= 0 ? done_ns : t.NsSinceLoadStart();
    const int64_t reading_ns = begin_ns < 0 ? 0 : (end_ns >= 0 ? end_ns : since_ns) - begin_ns;
    w->BeginObject();
    w->Field("index", static_cast<uint64_t>(i));
    w->Field("name", t.name);
    w->Field("source", t.source);
    w->Field("phase", LoadPhaseKey(phase));
    w->Field("bytes_read", read);
    w->Field("bytes_total", total);
    w->Field("fraction", total > 0 ? std::min(1.0, static_cast<double>(read) / total) : 0.0);
    w->Field("mb_per_s", reading_ns <= 0 ? 0.0 : read / 1e6 / Seconds(reading_ns));
    w->Field("seconds", Seconds(since_ns));
    if (begin_ns >= 0 && end_ns >= 0) w->Field("import_seconds", Seconds(end_ns - begin_ns));
    if (phase == LoadPhase::kFailed) {
      w->Field("error", t.error);
      w->Field("file", t.source.empty() ? t.name : t.source);
      w->Field("offset", t.error_offset);
    }
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
