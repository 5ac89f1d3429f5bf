#include "profiler/chrome_trace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "base/json_escape.h"

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

std::string ChromeTraceDocument(const Trace& trace, const std::string& trace_name) {
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

namespace {

constexpr std::string_view kTempMarker = ".tmp.";

// While alive, SIGXFSZ (a write past `ulimit -f`) makes the write fail with EFBIG instead of
// killing the process. Only a default disposition is replaced; nesting and threads are counted.
class SigxfszAsError {
 public:
  SigxfszAsError() {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_++ > 0) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    installed_ = sigaction(SIGXFSZ, nullptr, &saved_) == 0 && saved_.sa_handler == SIG_DFL &&
                 sigaction(SIGXFSZ, &ignore, nullptr) == 0;
  }
  ~SigxfszAsError() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--depth_ > 0 || !installed_) return;
    sigaction(SIGXFSZ, &saved_, nullptr);
    installed_ = false;
  }

 private:
  static inline std::mutex mu_;
  static inline int depth_ = 0;
  static inline bool installed_ = false;
  static inline struct sigaction saved_ {};
};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  std::string out(name);
  for (char& c : out) {
    if (c == '/' || c == '@') c = '_';
  }
  return out;
}

// "<path>.tmp.<pid>@<host>": the writer's process, so a later run can tell a leftover from a
// file being written.
std::string TempPathFor(const std::string& path) {
  return fmt::format("{}{}{}@{}", path, kTempMarker, getpid(), HostName());
}

// The pid in a temp file name of this host, or 0 when the name is not one (or of another host).
// Names without "@host" (older versions) are taken as this host's.
pid_t TempFilePid(std::string_view name, const std::string& host) {
  const size_t marker = name.rfind(kTempMarker);
  if (marker == std::string_view::npos) return 0;
  const std::string_view base = name.substr(0, marker);
  if (!base.ends_with(".json") && !base.ends_with(".json.gz")) return 0;
  std::string_view rest = name.substr(marker + kTempMarker.size());
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    if (rest.substr(at + 1) != host) return 0;
    rest = rest.substr(0, at);
  }
  int64_t pid = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || pid <= 0 || pid > INT32_MAX) {
    return 0;
  }
  return static_cast<pid_t>(pid);
}

std::string Bytes(uint64_t n) {
  if (n < 10 * 1024) return fmt::format("{} bytes", n);
  if (n < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / 1048576.0);
}

// Writes all of `data` to `fd`; false with errno set on failure. `*written` counts what went out.
bool WriteAll(int fd, std::string_view data, uint64_t* written) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), std::min<size_t>(data.size(), 1u << 24));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    *written += static_cast<uint64_t>(n);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Writes `json` to `tmp`, gzip-compressed when `gzip`. "" or the reason, with how much was
// written before it failed.
std::string WriteFileContents(const std::string& tmp, std::string_view json, bool gzip) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  uint64_t written = 0;   // bytes of the file
  uint64_t consumed = 0;  // bytes of the JSON document handled
  bool ok = true;
  if (!gzip) {
    ok = WriteAll(fd, json, &written);
    consumed = written;
  } else {
    z_stream z{};
    ok = deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    std::string out(1 << 20, '\0');
    int flush = Z_NO_FLUSH;
    while (ok) {
      const size_t chunk = std::min<size_t>(json.size() - consumed, 1u << 24);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(json.data() + consumed));
      z.avail_in = static_cast<uInt>(chunk);
      flush = consumed + chunk == json.size() ? Z_FINISH : Z_NO_FLUSH;
      int rc = Z_OK;
      do {
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        rc = deflate(&z, flush);
        ok = WriteAll(fd, std::string_view(out.data(), out.size() - z.avail_out), &written);
      } while (ok && z.avail_out == 0);
      consumed += chunk - z.avail_in;
      if (!ok || rc == Z_STREAM_END) break;
    }
    deflateEnd(&z);
  }
  const int write_errno = errno;
  if (::close(fd) != 0 && ok) return std::strerror(errno);
  if (ok) return "";
  return fmt::format("{} after {} of the {} document had been written", std::strerror(write_errno),
                     Bytes(consumed), Bytes(json.size()));
}

}  // namespace

size_t RemoveStaleTempTraces(const std::string& dir, int depth) {
  namespace fs = std::filesystem;
  const std::string host = HostName();
  size_t removed = 0;
  std::error_code ec;
  auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(dir, options, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it.depth() >= depth) it.disable_recursion_pending();
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const pid_t pid = TempFilePid(it->path().filename().string(), host);
    if (pid == 0 || pid == getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to know)
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

Status WriteChromeTraceFile(const Trace& trace, const std::string& path) {
  const std::string json = ChromeTraceDocument(trace, path);
  const bool gzip = path.size() > 3 && path.ends_with(".gz");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  RemoveStaleTempTraces(dir.empty() ? "." : dir.string(), 0);
  const std::string tmp = TempPathFor(path);
  SigxfszAsError sigxfsz;
  std::string error = WriteFileContents(tmp, json, gzip);
  if (error.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) error = std::strerror(errno);
  if (error.empty()) return Status::Ok();
  std::remove(tmp.c_str());
  return Status::IoError(
      fmt::format("cannot write chrome trace to '{}': {}; '{}' was not written (its partial "
                  "temporary file was removed)",
                  path, error, path),
      path);
}

}  // namespace opscope::internal

namespace opscope {

std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name) {
  return internal::ChromeTraceDocument(trace, trace_name);
}

Status WriteChromeTrace(const Trace& trace, const std::string& path) {
  return internal::WriteChromeTraceFile(trace, path);
}

}  // namespace opscope
