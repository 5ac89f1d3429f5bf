// Nsight Systems tables into the trace model (see nsys_translator.h for the mapping).
#include "import/nsys/nsys_translator.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/json_writer.h"

namespace opscope::import::nsys {
namespace {

constexpr int64_t kIdBits = 0x1000000;  // nsys's global ids: 24 bits of tid, then 24 of pid

int64_t PidOf(int64_t global_tid) { return (global_tid / kIdBits) % kIdBits; }
int64_t TidOf(int64_t global_tid) { return global_tid % kIdBits; }
// The globalPid of a globalTid: the same id with the tid bits cleared.
int64_t GlobalPidOf(int64_t global_tid) { return global_tid - TidOf(global_tid); }

}  // namespace

int RankInThreadName(std::string_view name) {
  constexpr std::string_view kPrefix = "MPI Rank ";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return -1;
  int rank = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || rank > (1 << 24)) return -1;
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

namespace {

// Writes `key: value` for an integer column when the row has one.
void IntField(JsonWriter* w, std::string_view key, const Row& row, int column) {
  if (const std::optional<int64_t> v = row.Int(column)) w->Field(key, *v);
}

}  // namespace

Status NsysTranslator::ReadAll() {
  Status first;
  for (Status (NsysTranslator::*step)() :
       {&NsysTranslator::ReadStrings, &NsysTranslator::ReadExportMetadata,
        &NsysTranslator::ReadNames, &NsysTranslator::ReadGpus, &NsysTranslator::ReadNvtx,
        &NsysTranslator::ReadRuntime, &NsysTranslator::ReadKernels, &NsysTranslator::ReadMemcpys,
        &NsysTranslator::ReadMemsets, &NsysTranslator::ReadSyncs}) {
    Status st = (this->*step)();
    if (!st.ok() && first.ok()) first = std::move(st);
  }
  Finish();
  return first;
}

std::string_view NsysTranslator::String(int64_t id) const {
  auto it = strings_.find(id);
  return it == strings_.end() ? std::string_view() : std::string_view(it->second);
}

Status NsysTranslator::ReadStrings() {
  int id = -1, value = -1;
  return db_.ReadTable(
      "StringIds",
      [&](const Table& t) {
        id = t.Column("id");
        value = t.Column("value");
      },
      [&](const Row& row) {
        if (const auto v = row.Int(id)) strings_[*v] = std::string(row.Text(value));
      });
}

Status NsysTranslator::ReadExportMetadata() {
  int name = -1, value = -1, epoch = -1;
  JsonWriter w;
  w.BeginObject();
  bool any = false;
  Status st = db_.ReadTable(
      "EXPORT_META_DATA",
      [&](const Table& t) {
        name = t.Column("name");
        value = t.Column("value");
      },
      [&](const Row& row) {
        w.Field(row.Text(name), row.Text(value));
        any = true;
        if (row.Text(name) == "EXPORT_INPUT_FILE") trace_->metadata().trace_name = row.Text(value);
      });
  w.EndObject();
  if (any) trace_->metadata().extra.emplace_back("nsysExport", w.Take());
  // Timestamps are ns after the session started; its UTC epoch time is the trace's base.
  Status start = db_.ReadTable(
      "TARGET_INFO_SESSION_START_TIME", [&](const Table& t) { epoch = t.Column("utcEpochNs"); },
      [&](const Row& row) {
        if (const auto v = row.Int(epoch)) trace_->metadata().base_time_ns = *v;
      });
  return st.ok() ? start : st;
}

Status NsysTranslator::ReadNames() {
  int gpid = -1, pname = -1, name_id = -1, gtid = -1;
  Status st = db_.ReadTable(
      "PROCESSES",
      [&](const Table& t) {
        gpid = t.Column("globalPid");
        pname = t.Column("name");
      },
      [&](const Row& row) {
        if (const auto v = row.Int(gpid)) processes_[*v] = std::string(row.Text(pname));
      });
  Status threads = db_.ReadTable(
      "ThreadNames",
      [&](const Table& t) {
        name_id = t.Column("nameId");
        gtid = t.Column("globalTid");
      },
      [&](const Row& row) {
        const auto tid = row.Int(gtid);
        const auto id = row.Int(name_id);
        if (!tid || !id) return;
        threads_[*tid] = std::string(String(*id));
        if (const int rank = RankInThreadName(String(*id)); rank >= 0) ranks_.push_back(rank);
      });
  return st.ok() ? threads : st;
}

Status NsysTranslator::ReadGpus() {
  int id = -1, name = -1, mem = -1, major = -1, minor = -1, sms = -1, clock = -1, bw = -1;
  return db_.ReadTable(
      "TARGET_INFO_GPU",
      [&](const Table& t) {
        id = t.Column("id");
        name = t.Column("name");
        mem = t.Column("totalMemory");
        major = t.Column("computeMajor");
        minor = t.Column("computeMinor");
        sms = t.Column("smCount");
        clock = t.Column("clockRate");
        bw = t.Column("memoryBandwidth");
      },
      [&](const Row& row) {
        // Kineto's deviceProperties keys, so the report and the perf model read them the same.
        JsonWriter w;
        w.BeginObject();
        IntField(&w, "id", row, id);
        w.Field("name", row.Text(name));
        IntField(&w, "totalGlobalMem", row, mem);
        IntField(&w, "computeMajor", row, major);
        IntField(&w, "computeMinor", row, minor);
        IntField(&w, "numSms", row, sms);
        IntField(&w, "clockRateHz", row, clock);
        IntField(&w, "memoryBandwidth", row, bw);
        w.EndObject();
        device_properties_.push_back(w.Take());
        if (const auto v = row.Int(id)) gpu_names_[*v] = std::string(row.Text(name));
      });
}

uint32_t NsysTranslator::HostThread(int64_t global_tid) {
  if (auto it = host_threads_.find(global_tid); it != host_threads_.end()) return it->second;
  const int64_t global_pid = GlobalPidOf(global_tid);
  auto pit = host_processes_.find(global_pid);
  if (pit == host_processes_.end()) {
    auto named = processes_.find(global_pid);
    const uint32_t p =
        trace_->AddProcess(PidOf(global_tid), named != processes_.end() ? named->second : "");
    pit = host_processes_.emplace(global_pid, p).first;
  }
  auto named = threads_.find(global_tid);
  const std::string name = named != threads_.end() && !named->second.empty()
                               ? named->second
                               : fmt::format("thread {}", TidOf(global_tid));
  const uint32_t track = trace_->AddThreadTrack(pit->second, TidOf(global_tid), name);
  host_threads_.emplace(global_tid, track);
  return track;
}

uint32_t NsysTranslator::DeviceStream(int64_t device, int64_t stream) {
  if (auto it = streams_.find({device, stream}); it != streams_.end()) return it->second;
  auto dit = devices_.find(device);
  if (dit == devices_.end()) {
    auto gpu = gpu_names_.find(device);
    const std::string name = gpu != gpu_names_.end() && !gpu->second.empty() ? gpu->second : "GPU";
    const uint32_t p = trace_->AddProcess(device, name, /*is_device=*/true);
    trace_->MutableProcess(p).labels = trace_->Intern(fmt::format("GPU {}", device));
    trace_->MutableProcess(p).sort_index = (int64_t{1} << 40) + device;  // after the host
    dit = devices_.emplace(device, p).first;
  }
  const uint32_t track = trace_->AddThreadTrack(
      dit->second, stream, fmt::format("stream {}", stream), TrackKind::kDeviceStream);
  streams_.emplace(std::make_pair(device, stream), track);
  return track;
}

bool NsysTranslator::Times(const Table& t, const Row& row, int start, int end, int64_t* ts,
                           int64_t* dur) {
  const auto s = row.Int(start);
  const auto e = row.Int(end);
  if (!s || !e) {
    log_->Warn(fmt::format("table {} row {}: no integer start and end; row skipped", t.name(),
                           row.index()),
               true);
    return false;
  }
  *ts = *s;
  if (*e < *s) {
    log_->Warn(fmt::format("table {} row {}: ends before it starts; kept with duration 0", t.name(),
                           row.index()),
               false);
  }
  *dur = *e >= *s ? *e - *s : 0;
  return true;
}

bool NsysTranslator::KeepArgs(ActivityKind kind, StringId name) {
  if (!options_.keep_args) return false;
  if (!options_.keep_args_of) return true;
  auto [it, added] = keep_args_.try_emplace({static_cast<uint8_t>(kind), name}, false);
  if (added) it->second = options_.keep_args_of(kind, trace_->Str(name));
  return it->second;
}

void NsysTranslator::AddSlice(Slice s, const std::string& args) {
  s.category = trace_->Intern(s.kind == ActivityKind::kRuntime  ? "cuda_runtime"
                              : s.kind == ActivityKind::kDriver ? "cuda_driver"
                              : s.kind == ActivityKind::kSync   ? "cuda_sync"
                                                                : KinetoCategory(s.kind));
  if (!args.empty() && KeepArgs(s.kind, s.name)) s.args = trace_->AddArgs(args);
  trace_->AddSlice(s);
  ++log_->stats().slices;
}

void NsysTranslator::Finish() {
  TraceMetadata& md = trace_->metadata();
  md.device_type = "CUDA";
  if (!device_properties_.empty()) {
    std::string props = "[";
    for (size_t i = 0; i < device_properties_.size(); ++i) {
      props += (i > 0 ? ", " : "") + device_properties_[i];
    }
    md.extra.emplace_back("deviceProperties", props + "]");
  }
  std::sort(ranks_.begin(), ranks_.end());
  ranks_.erase(std::unique(ranks_.begin(), ranks_.end()), ranks_.end());
  if (ranks_.size() == 1) {
    md.extra.emplace_back("distributedInfo", fmt::format("{{\"rank\": {}}}", ranks_.front()));
  } else if (ranks_.size() > 1) {
    log_->Warn(fmt::format("threads of {} MPI ranks in one export: no single rank for the job",
                           ranks_.size()),
               false);
  }
}

}  // namespace opscope::import::nsys
