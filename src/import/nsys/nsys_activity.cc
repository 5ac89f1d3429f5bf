// The Nsight Systems tables of timed activity: NVTX ranges and marks, CUDA runtime calls, and the
// device's kernels, memcpys, memsets and syncs (see nsys_translator.h for the mapping).
#include <fmt/format.h>

#include "base/json_writer.h"
#include "import/nsys/nsys_translator.h"

namespace opscope::import::nsys {
namespace {

constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxThreadName = 39;
constexpr int64_t kNvtxPushPopRange = 59;
constexpr int64_t kNvtxStartEndRange = 60;

// CUPTI's CUpti_ActivityMemcpyKind, as the MEMCPY table's copyKind holds it.
std::string MemcpyName(int64_t kind) {
  static constexpr const char* kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  if (kind >= 0 && kind < static_cast<int64_t>(std::size(kNames))) {
    return std::string("Memcpy ") + kNames[kind];
  }
  return fmt::format("Memcpy kind {}", kind);
}

// CUPTI's CUpti_ActivitySynchronizationType, named as Kineto names its cuda_sync events.
std::string_view SyncName(int64_t type) {
  switch (type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Sync";
  }
}

void IntField(JsonWriter* w, std::string_view key, const Row& row, int column) {
  if (const std::optional<int64_t> v = row.Int(column)) w->Field(key, *v);
}

// The columns every CUPTI activity table has.
struct ActivityColumns {
  int start = -1, end = -1, device = -1, context = -1, stream = -1, correlation = -1;
  void Find(const Table& t) {
    start = t.Column("start");
    end = t.Column("end");
    device = t.Column("deviceId");
    context = t.Column("contextId");
    stream = t.Column("streamId");
    correlation = t.Column("correlationId");
  }
  // Kineto's args of device activity: device, context, stream, correlation.
  void Write(const Row& row, JsonWriter* w) const {
    IntField(w, "device", row, device);
    IntField(w, "context", row, context);
    IntField(w, "stream", row, stream);
    IntField(w, "correlation", row, correlation);
  }
};

}  // namespace

Status NsysTranslator::ReadNvtx() {
  int start = -1, end = -1, type = -1, text = -1, text_id = -1, gtid = -1, domain = -1;
  Table table;
  return db_.ReadTable(
      "NVTX_EVENTS",
      [&](const Table& t) {
        table = t;
        start = t.Column("start");
        end = t.Column("end");
        type = t.Column("eventType");
        text = t.Column("text");
        text_id = t.Column("textId");
        gtid = t.Column("globalTid");
        domain = t.Column("domainId");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        const int64_t kind = row.Int(type).value_or(0);
        const std::string_view name =
            row.IsNull(text) ? String(row.Int(text_id).value_or(-1)) : row.Text(text);
        const auto tid = row.Int(gtid);
        if (kind == kNvtxThreadName) {  // nvtxNameOsThread: a name for an existing thread
          if (tid) threads_[*tid] = std::string(name);
          if (const int rank = RankInThreadName(name); rank >= 0) ranks_.push_back(rank);
          return;
        }
        if (!tid ||
            (kind != kNvtxMark && kind != kNvtxPushPopRange && kind != kNvtxStartEndRange)) {
          return;  // domain and category registrations: names only
        }
        if (kind == kNvtxMark) {
          Instant i;
          i.ts_ns = row.Int(start).value_or(0);
          i.name = trace_->Intern(name);
          i.category = trace_->Intern("nvtx");
          i.track = HostThread(*tid);
          trace_->AddInstant(i);
          ++log_->stats().instants;
          return;
        }
        Slice s;
        if (!Times(table, row, start, end, &s.ts_ns, &s.dur_ns)) return;
        s.kind = ActivityKind::kCpuOp;
        s.name = trace_->Intern(name);
        s.track = HostThread(*tid);
        JsonWriter w;
        w.BeginObject();
        IntField(&w, "domain", row, domain);
        w.EndObject();
        AddSlice(s, row.Int(domain).value_or(0) != 0 ? w.Take() : std::string());
      });
}

Status NsysTranslator::ReadRuntime() {
  int start = -1, end = -1, gtid = -1, correlation = -1, name_id = -1, ret = -1;
  Table table;
  return db_.ReadTable(
      "CUPTI_ACTIVITY_KIND_RUNTIME",
      [&](const Table& t) {
        table = t;
        start = t.Column("start");
        end = t.Column("end");
        gtid = t.Column("globalTid");
        correlation = t.Column("correlationId");
        name_id = t.Column("nameId");
        ret = t.Column("returnValue");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        Slice s;
        if (!Times(table, row, start, end, &s.ts_ns, &s.dur_ns)) return;
        const std::string_view name = String(row.Int(name_id).value_or(-1));
        // The table holds driver calls (cu*) beside the runtime's (cuda*).
        s.kind = name.starts_with("cu") && !name.starts_with("cuda") ? ActivityKind::kDriver
                                                                     : ActivityKind::kRuntime;
        s.name = trace_->Intern(name);
        s.correlation = row.Int(correlation).value_or(0);
        s.track = HostThread(row.Int(gtid).value_or(0));
        JsonWriter w;
        w.BeginObject();
        IntField(&w, "correlation", row, correlation);
        IntField(&w, "return value", row, ret);
        w.EndObject();
        AddSlice(s, w.Take());
      });
}

Status NsysTranslator::ReadKernels() {
  ActivityColumns c;
  int name = -1, short_name = -1, gx = -1, gy = -1, gz = -1, bx = -1, by = -1, bz = -1;
  int regs = -1, static_smem = -1, dynamic_smem = -1;
  Table table;
  return db_.ReadTable(
      "CUPTI_ACTIVITY_KIND_KERNEL",
      [&](const Table& t) {
        table = t;
        c.Find(t);
        name = t.Column("demangledName");
        short_name = t.Column("shortName");
        gx = t.Column("gridX");
        gy = t.Column("gridY");
        gz = t.Column("gridZ");
        bx = t.Column("blockX");
        by = t.Column("blockY");
        bz = t.Column("blockZ");
        regs = t.Column("registersPerThread");
        static_smem = t.Column("staticSharedMemory");
        dynamic_smem = t.Column("dynamicSharedMemory");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        Slice s;
        if (!Times(table, row, c.start, c.end, &s.ts_ns, &s.dur_ns)) return;
        s.kind = ActivityKind::kKernel;
        std::string_view kernel = String(row.Int(name).value_or(-1));
        if (kernel.empty()) kernel = String(row.Int(short_name).value_or(-1));
        s.name = trace_->Intern(kernel);
        s.correlation = row.Int(c.correlation).value_or(0);
        s.track = DeviceStream(row.Int(c.device).value_or(0), row.Int(c.stream).value_or(0));
        JsonWriter w;
        w.BeginObject();
        c.Write(row, &w);
        IntField(&w, "registers per thread", row, regs);
        w.Field("shared memory",
                row.Int(static_smem).value_or(0) + row.Int(dynamic_smem).value_or(0));
        w.Key("grid");
        w.BeginArray();
        for (int col : {gx, gy, gz}) w.Int(row.Int(col).value_or(0));
        w.EndArray();
        w.Key("block");
        w.BeginArray();
        for (int col : {bx, by, bz}) w.Int(row.Int(col).value_or(0));
        w.EndArray();
        w.Field("short name", String(row.Int(short_name).value_or(-1)));
        w.EndObject();
        AddSlice(s, w.Take());
      });
}

Status NsysTranslator::ReadMemcpys() {
  ActivityColumns c;
  int bytes = -1, kind = -1, src = -1, dst = -1;
  Table table;
  return db_.ReadTable(
      "CUPTI_ACTIVITY_KIND_MEMCPY",
      [&](const Table& t) {
        table = t;
        c.Find(t);
        bytes = t.Column("bytes");
        kind = t.Column("copyKind");
        src = t.Column("srcKind");
        dst = t.Column("dstKind");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        Slice s;
        if (!Times(table, row, c.start, c.end, &s.ts_ns, &s.dur_ns)) return;
        s.kind = ActivityKind::kMemcpy;
        s.name = trace_->Intern(MemcpyName(row.Int(kind).value_or(0)));
        s.correlation = row.Int(c.correlation).value_or(0);
        s.track = DeviceStream(row.Int(c.device).value_or(0), row.Int(c.stream).value_or(0));
        JsonWriter w;
        w.BeginObject();
        c.Write(row, &w);
        IntField(&w, "bytes", row, bytes);
        IntField(&w, "copy kind", row, kind);
        IntField(&w, "src kind", row, src);
        IntField(&w, "dst kind", row, dst);
        w.EndObject();
        AddSlice(s, w.Take());
      });
}

Status NsysTranslator::ReadMemsets() {
  ActivityColumns c;
  int bytes = -1, value = -1;
  Table table;
  return db_.ReadTable(
      "CUPTI_ACTIVITY_KIND_MEMSET",
      [&](const Table& t) {
        table = t;
        c.Find(t);
        bytes = t.Column("bytes");
        value = t.Column("value");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        Slice s;
        if (!Times(table, row, c.start, c.end, &s.ts_ns, &s.dur_ns)) return;
        s.kind = ActivityKind::kMemset;
        s.name = trace_->Intern("Memset");
        s.correlation = row.Int(c.correlation).value_or(0);
        s.track = DeviceStream(row.Int(c.device).value_or(0), row.Int(c.stream).value_or(0));
        JsonWriter w;
        w.BeginObject();
        c.Write(row, &w);
        IntField(&w, "bytes", row, bytes);
        IntField(&w, "value", row, value);
        w.EndObject();
        AddSlice(s, w.Take());
      });
}

Status NsysTranslator::ReadSyncs() {
  ActivityColumns c;
  int type = -1;
  Table table;
  return db_.ReadTable(
      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
      [&](const Table& t) {
        table = t;
        c.Find(t);
        type = t.Column("syncType");
      },
      [&](const Row& row) {
        ++log_->stats().events;
        Slice s;
        if (!Times(table, row, c.start, c.end, &s.ts_ns, &s.dur_ns)) return;
        s.kind = ActivityKind::kSync;
        s.name = trace_->Intern(SyncName(row.Int(type).value_or(0)));
        s.correlation = row.Int(c.correlation).value_or(0);
        s.track = DeviceStream(row.Int(c.device).value_or(0), row.Int(c.stream).value_or(0));
        JsonWriter w;
        w.BeginObject();
        c.Write(row, &w);
        IntField(&w, "sync type", row, type);
        w.EndObject();
        AddSlice(s, w.Take());
      });
}

}  // namespace opscope::import::nsys
