// XProf's trace viewer JSON given the XPlane reader's meaning (see xprof_trace.h).
#include "import/xplane/xprof_trace.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "import/xplane/op_index.h"

namespace opscope::import {
namespace {

enum class Role : uint8_t { kHost, kStream, kOps, kModules, kOther };

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// An integer arg, written as a number or a string (XProf quotes ids above 2^53).
std::optional<int64_t> IntArg(const Trace& trace, uint32_t args, std::string_view key) {
  std::optional<std::string> text = trace.FindArg(args, key);
  if (!text) return std::nullopt;
  std::string_view v = *text;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  int64_t out = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
  return out;
}

std::string StringArg(const Trace& trace, uint32_t args, std::string_view key) {
  std::optional<std::string> text = trace.FindArg(args, key);
  if (!text || text->size() < 2 || text->front() != '"') return {};
  return text->substr(1, text->size() - 2);
}

// Each track's role, from its process's and its own name.
std::vector<Role> TrackRoles(const Trace& trace) {
  const auto& procs = trace.processes();
  std::vector<bool> streams(procs.size(), false), xla_ops(procs.size(), false);
  for (const Track& t : trace.tracks()) {
    const std::string_view name = trace.Str(t.name);
    if (name.starts_with("Stream")) streams[t.process] = true;
    if (name == "XLA Ops") xla_ops[t.process] = true;
  }
  std::vector<Role> roles;
  for (const Track& t : trace.tracks()) {
    const std::string_view process = trace.Str(procs[t.process].name);
    const std::string_view name = trace.Str(t.name);
    Role role = Role::kHost;
    if (process.starts_with("/device:")) {
      const bool ops = xla_ops[t.process] ? name == "XLA Ops"
                                          : (name == "TensorFlow Ops" || name == "Framework Ops");
      if (streams[t.process]) {
        role = name.starts_with("Stream") ? Role::kStream
               : ops                      ? Role::kOps
               : name == "XLA Modules"    ? Role::kModules
                                          : Role::kOther;
      } else {
        role = name == "XLA Ops"       ? Role::kStream
               : name == "XLA Modules" ? Role::kModules
                                       : Role::kOther;
      }
    }
    roles.push_back(role);
  }
  return roles;
}

}  // namespace

bool LooksLikeXprofTrace(const Trace& trace) {
  bool ns = false;
  for (const auto& [key, value] : trace.metadata().extra) {
    ns = ns || (key == "displayTimeUnit" && value == "\"ns\"");
  }
  if (!ns) return false;
  for (const Process& p : trace.processes()) {
    if (trace.Str(p.name).starts_with("/device:")) return true;
  }
  return false;
}

void ApplyXprofConventions(Trace* trace) {
  TraceMetadata& md = trace->metadata();
  for (uint32_t p = 0; p < trace->processes().size(); ++p) {
    Process& proc = trace->MutableProcess(p);
    const std::string_view name = trace->Str(proc.name);
    if (!name.starts_with("/device:")) continue;
    proc.is_device = true;
    proc.labels = proc.name;
    if (!md.device_type.empty()) continue;
    std::string_view kind = name.substr(std::string_view("/device:").size());
    kind = kind.substr(0, kind.find(':'));
    if (kind == "GPU") {
      md.device_type = "CUDA";
    } else {
      for (char c : kind)
        md.device_type += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  const std::vector<Role> roles = TrackRoles(*trace);
  const uint32_t n = static_cast<uint32_t>(trace->slices().size());
  std::vector<xplane::OpIndex> ops(trace->processes().size());
  std::vector<std::string> names;  // op names, kept alive for the index's views
  names.reserve(n);
  int64_t next_external_id = 1;
  // The op level first, so that device activity finds the op it ran in.
  for (uint32_t i = 0; i < n; ++i) {
    Slice& s = trace->MutableSlice(i);
    const Role role = s.track < roles.size() ? roles[s.track] : Role::kOther;
    if (role != Role::kOps && role != Role::kModules) continue;
    s.kind = ActivityKind::kCpuOp;
    s.category = trace->Intern(KinetoCategory(ActivityKind::kCpuOp));
    s.external_id = next_external_id++;
    const uint32_t process = trace->tracks()[s.track].process;
    names.emplace_back(trace->Str(s.name));
    const xplane::OpIndex::Op op{s.ts_ns, s.ts_ns + s.dur_ns, s.external_id, names.back()};
    role == Role::kOps ? ops[process].AddOp(op) : ops[process].AddModule(op);
  }
  for (xplane::OpIndex& index : ops) index.Sort();
  for (uint32_t i = 0; i < n; ++i) {
    Slice& s = trace->MutableSlice(i);
    const Role role = s.track < roles.size() ? roles[s.track] : Role::kOther;
    const std::string_view name = trace->Str(s.name);
    switch (role) {
      case Role::kStream: {
        s.kind = StartsWithNoCase(name, "copy") || StartsWithNoCase(name, "memcpy")
                     ? ActivityKind::kMemcpy
                 : StartsWithNoCase(name, "memset") ? ActivityKind::kMemset
                                                    : ActivityKind::kKernel;
        s.correlation = IntArg(*trace, s.args, "correlation_id").value_or(0);
        const uint32_t process = trace->tracks()[s.track].process;
        s.external_id =
            ops[process].Find(s.ts_ns, s.ts_ns + s.dur_ns, StringArg(*trace, s.args, "hlo_op"));
        trace->MutableTrack(s.track).kind = TrackKind::kDeviceStream;
        break;
      }
      case Role::kHost:
        s.correlation = IntArg(*trace, s.args, "correlation_id").value_or(0);
        s.kind = s.correlation != 0 ? ActivityKind::kRuntime : ActivityKind::kUserAnnotation;
        break;
      case Role::kOther:
        s.kind = ActivityKind::kOther;
        break;
      default:
        continue;
    }
    s.category = trace->Intern(s.kind == ActivityKind::kRuntime ? std::string_view("cuda_runtime")
                                                                : KinetoCategory(s.kind));
  }
  md.timeline_rule = DeviceTimelineRule::kXla;
}

}  // namespace opscope::import
