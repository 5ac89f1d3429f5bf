// The XPlane reader on XSpaces written here with protozero's writer: what each plane and line
// becomes, exact picoseconds, launches and ops linked, stats and metadata stats as args, and bad
// input (every cut of a file, a corrupt byte) reported with its place while what came before stays.
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/key_averages.h"

namespace opscope {
namespace {

// A small model of xplane.proto for writing test inputs.
struct TStat {
  TStat(int64_t id_in, int64_t value) : id(id_in), int_value(value) {}
  TStat(int64_t id_in, int64_t, std::string value) : id(id_in), text(std::move(value)) {}
  int64_t id;
  int64_t int_value = 0;
  std::string text;  // a str_value when set
  int64_t ref = 0;   // a ref_value when set
};
struct TEvent {
  int64_t metadata_id;
  int64_t offset_ps;
  int64_t duration_ps;
  std::vector<TStat> stats;
};
struct TLine {
  int64_t id;
  std::string name;
  int64_t timestamp_ns;
  std::vector<TEvent> events;
};
struct TMetadata {
  std::string name, display_name;
  std::vector<TStat> stats;
};
struct TPlane {
  std::string name;
  std::vector<TLine> lines;
  std::map<int64_t, TMetadata> events;
  std::map<int64_t, std::string> stats;
};

void WriteStat(protozero::pbf_writer* parent, uint32_t field, const TStat& s) {
  protozero::pbf_writer w(*parent, field);
  w.add_int64(1, s.id);
  if (!s.text.empty()) {
    w.add_string(5, s.text);
  } else if (s.ref != 0) {
    w.add_uint64(7, static_cast<uint64_t>(s.ref));
  } else {
    w.add_int64(4, s.int_value);
  }
}

std::string Encode(const std::vector<TPlane>& planes) {
  std::string out;
  protozero::pbf_writer space(out);
  for (size_t p = 0; p < planes.size(); ++p) {
    const TPlane& plane = planes[p];
    protozero::pbf_writer pw(space, 1);
    pw.add_int64(1, static_cast<int64_t>(p));
    pw.add_string(2, plane.name);
    for (const TLine& line : plane.lines) {
      protozero::pbf_writer lw(pw, 3);
      lw.add_int64(1, line.id);
      lw.add_string(2, line.name);
      lw.add_int64(3, line.timestamp_ns);
      for (const TEvent& e : line.events) {
        protozero::pbf_writer ew(lw, 4);
        ew.add_int64(1, e.metadata_id);
        ew.add_int64(2, e.offset_ps);
        ew.add_int64(3, e.duration_ps);
        for (const TStat& s : e.stats) WriteStat(&ew, 4, s);
      }
    }
    for (const auto& [id, md] : plane.events) {
      protozero::pbf_writer entry(pw, 4);
      entry.add_int64(1, id);
      protozero::pbf_writer mw(entry, 2);
      mw.add_int64(1, id);
      mw.add_string(2, md.name);
      if (!md.display_name.empty()) mw.add_string(4, md.display_name);
      for (const TStat& s : md.stats) WriteStat(&mw, 5, s);
    }
    for (const auto& [id, name] : plane.stats) {
      protozero::pbf_writer entry(pw, 5);
      entry.add_int64(1, id);
      protozero::pbf_writer sw(entry, 2);
      sw.add_int64(1, id);
      sw.add_string(2, name);
    }
  }
  return out;
}

// Stat ids shared by the planes below.
enum : int64_t { kCorrelation = 1, kHloOp = 2, kFlops = 3, kMemcpyDetails = 4, kKind = 5 };
const std::map<int64_t, std::string> kStatNames = {
    {kCorrelation, "correlation_id"},   {kHloOp, "hlo_op"}, {kFlops, "flops"},
    {kMemcpyDetails, "memcpy_details"}, {kKind, "kind"},    {9, "fusion"}};

// A JAX GPU step: a launch on the host's CUPTI plane, its kernel and a memcpy on a stream, the XLA
// op and module the kernel ran in.
std::vector<TPlane> GpuSpace() {
  const int64_t t0 = 1'700'000'000'000'000'000;
  TPlane host{"/host:CUPTI",
              {},
              {{1, {"cuLaunchKernel", "", {}}}, {2, {"cuMemcpyAsync", "", {}}}},
              kStatNames};
  host.lines.push_back({77,
                        "thread 77",
                        t0,
                        {{1, 1'000, 2'000'000, {{kCorrelation, 7}}},
                         {2, 3'000'000, 1'000'000, {{kCorrelation, 8}}}}});
  TPlane gpu{"/device:GPU:0", {}, {}, kStatNames};
  gpu.events = {{1, {"loop_fusion_kernel", "", {}}},
                {2, {"MemcpyD2D", "", {}}},
                {3, {"fusion.1", "", {{kFlops, 1'000'000}}}},
                {4, {"jit_step", "", {}}}};
  gpu.lines.push_back(
      {13,
       "Stream #13(compute)",
       t0,
       {{1, 10'000'000, 5'000'000, {{kCorrelation, 7}, {kHloOp, 0, "fusion.1"}}},
        {2, 20'000'000, 1'500, {{kCorrelation, 8}, {kMemcpyDetails, 0, "kind:DtoD"}}}}});
  gpu.lines.push_back({-1, "XLA Ops", t0, {{3, 9'000'000, 7'000'000, {}}}});
  gpu.lines.push_back({-2, "XLA Modules", t0, {{4, 8'000'000, 20'000'000, {}}}});
  return {host, gpu};
}

const Slice* Find(const Trace& t, std::string_view name) {
  for (const Slice& s : t.slices()) {
    if (t.Str(s.name) == name) return &s;
  }
  return nullptr;
}

TEST(XPlaneReaderTest, DeviceActivityLinksToItsLaunchAndItsXlaOp) {
  const std::string bytes = Encode(GpuSpace());
  EXPECT_EQ(DetectTraceFormatFromMemory(bytes), TraceFormat::kXPlane);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(bytes, &trace, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kXPlane);
  EXPECT_EQ(stats.events, 6u);
  EXPECT_EQ(trace.metadata().base_time_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(trace.metadata().device_type, "CUDA");
  const Slice* kernel = Find(trace, "loop_fusion_kernel");
  const Slice* memcpy = Find(trace, "MemcpyD2D");
  const Slice* op = Find(trace, "fusion.1");
  const Slice* module = Find(trace, "jit_step");
  const Slice* launch = Find(trace, "cuLaunchKernel");
  ASSERT_TRUE(kernel && memcpy && op && module && launch);
  EXPECT_EQ(kernel->kind, ActivityKind::kKernel);
  EXPECT_EQ(memcpy->kind, ActivityKind::kMemcpy);  // memcpy_details
  EXPECT_EQ(op->kind, ActivityKind::kCpuOp);
  EXPECT_EQ(module->kind, ActivityKind::kCpuOp);
  EXPECT_EQ(launch->kind, ActivityKind::kRuntime);
  EXPECT_EQ(kernel->ts_ns, 10'000);
  EXPECT_EQ(kernel->dur_ns, 5'000);
  // Ops and modules share a track: the module encloses the op.
  EXPECT_EQ(op->track, module->track);
  EXPECT_EQ(op->depth, 1);
  const uint32_t k = static_cast<uint32_t>(kernel - trace.slices().data());
  const DeviceLink& link = trace.Link(k);
  EXPECT_EQ(&trace.slices()[link.runtime], launch);
  EXPECT_EQ(&trace.slices()[link.op], op);
  // key_averages and the op summary credit the kernel to the XLA op (its module gets it as
  // device total); the launch delay is the kernel's start after its launch.
  const KeyAverages avg = KeyAverages::FromTrace(trace);
  bool found = false;
  for (const KeyAverage& row : avg.rows()) {
    if (row.key == "fusion.1" && !row.is_device) {
      found = true;
      EXPECT_EQ(row.self_device_time_total_ns, 5'000);
      EXPECT_EQ(row.flops, 1'000'000);  // a metadata-level stat, as an arg
    }
    // The memcpy ran in no op but in the module: the module's own, plus its op's.
    if (row.key == "jit_step") {
      EXPECT_EQ(row.device_time_total_ns, 5'000 + 2);
    }
  }
  EXPECT_TRUE(found);
  const OpSummary ops = ComputeOpSummary(trace);
  ASSERT_EQ(ops.rows.size(), 2u);
  EXPECT_EQ(ops.rows[0].name, "fusion.1");
  EXPECT_EQ(ops.rows[0].direct_device_ns, 5'000);
  EXPECT_EQ(ops.rows[1].name, "jit_step");
  const LaunchStatistics launches = ComputeLaunchStatistics(trace);
  EXPECT_EQ(launches.launch_delay.count, 2);
  EXPECT_EQ(launches.launch_delay.min_ns, 10'000 - 1);
  // Stats become args: the hlo_op string and the correlation id.
  EXPECT_EQ(trace.FindArg(kernel->args, "hlo_op").value_or(""), "\"fusion.1\"");
  EXPECT_EQ(trace.FindArg(kernel->args, "correlation_id").value_or(""), "7");
}

// Picoseconds: each end rounds to the nearest ns (half up), and the exact values stay in args.
TEST(XPlaneReaderTest, PicosecondsAreKeptExactly) {
  std::vector<TPlane> space = GpuSpace();
  space[1].lines[0].events[1].offset_ps = 20'000'499;
  space[1].lines[0].events[1].duration_ps = 1'002;  // ends at 20'001'501 ps
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(Encode(space), &trace).ok());
  const Slice* memcpy = Find(trace, "MemcpyD2D");
  ASSERT_NE(memcpy, nullptr);
  EXPECT_EQ(memcpy->ts_ns, 20'000);  // 20'000.499 ns
  EXPECT_EQ(memcpy->dur_ns, 2);      // to 20'002 (20'001.501 ns)
  EXPECT_EQ(trace.FindArg(memcpy->args, "offset_ps").value_or(""), "20000499");
  EXPECT_EQ(trace.FindArg(memcpy->args, "duration_ps").value_or(""), "1002");
  // Whole ns: no ps args.
  const Slice* kernel = Find(trace, "loop_fusion_kernel");
  EXPECT_FALSE(trace.FindArg(kernel->args, "offset_ps").has_value());
}

// A TPU step has no streams: its XLA ops are the device's activity, its modules the op level.
TEST(XPlaneReaderTest, TpuOpsAreTheDeviceActivity) {
  TPlane tpu{"/device:TPU:0", {}, {}, kStatNames};
  tpu.events = {{1, {"fusion.3", "", {}}}, {2, {"copy.4", "", {}}}, {3, {"jit_infer", "", {}}}};
  tpu.lines.push_back({1, "XLA Ops", 1000, {{1, 0, 4'000'000, {}}, {2, 6'000'000, 2'000'000, {}}}});
  tpu.lines.push_back({2, "XLA Modules", 1000, {{3, 0, 9'000'000, {}}}});
  tpu.lines.push_back({3, "Steps", 1000, {{3, 0, 10'000'000, {}}}});
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(Encode({tpu}), &trace).ok());
  EXPECT_EQ(trace.metadata().device_type, "TPU");
  const Slice* fusion = Find(trace, "fusion.3");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->kind, ActivityKind::kKernel);
  const DeviceTimeline tl = ComputeDeviceTimeline(trace);
  EXPECT_EQ(tl.total_ns, 8'000);
  EXPECT_EQ(tl.busy_ns, 6'000);
  EXPECT_EQ(tl.computation_ns, 4'000);
  EXPECT_EQ(tl.total_memcpy_ns, 2'000);  // "copy.4": TraceLens's JAX rule, by name
  const OpSummary ops = ComputeOpSummary(trace);
  ASSERT_EQ(ops.rows.size(), 1u);
  EXPECT_EQ(ops.rows[0].name, "jit_infer");
  EXPECT_EQ(ops.rows[0].direct_device_ns, 6'000);
}

// Every cut of a valid XSpace imports without a crash; a cut file is an error that names the
// byte, and the events before the cut stay (more bytes never give fewer events).
TEST(XPlaneReaderTest, EveryCutKeepsWhatCameBefore) {
  const std::string bytes = Encode(GpuSpace());
  size_t last = 0, complete = 0;
  for (size_t n = 1; n < bytes.size(); ++n) {
    Trace trace;
    ImportStats stats;
    const Status st = ImportTraceFromMemory(std::string_view(bytes).substr(0, n), &trace, &stats);
    EXPECT_TRUE(trace.finalized());
    if (stats.format != TraceFormat::kXPlane) continue;  // too short to be recognised
    if (st.ok()) {
      ++complete;  // a cut between two planes leaves a valid XSpace of the first
    } else {
      EXPECT_NE(st.message().find("byte "), std::string::npos) << st.message();
      EXPECT_FALSE(trace.metadata().warnings.empty());
    }
    EXPECT_GE(trace.slices().size(), last) << n;
    last = trace.slices().size();
  }
  EXPECT_EQ(complete, 1u);
  EXPECT_GE(last, 5u);
}

TEST(XPlaneReaderTest, ACorruptByteNamesPlaneLineAndEvent) {
  std::string bytes = Encode(GpuSpace());
  // The second event of the host line: its first field's tag becomes wire type 7 (invalid).
  const size_t at = bytes.find(std::string("\x08\x02\x10", 3));  // metadata_id 2, then offset_ps
  ASSERT_NE(at, std::string::npos);
  bytes[at] = '\x0f';
  Trace trace;
  const Status st = ImportTraceFromMemory(bytes, &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.offset(), at);
  EXPECT_NE(st.message().find("plane 0 (\"/host:CUPTI\")"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("line 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("event 1"), std::string::npos) << st.message();
  // The event before it stays, and the GPU plane after it is read.
  EXPECT_NE(Find(trace, "cuLaunchKernel"), nullptr);
  EXPECT_EQ(Find(trace, "cuMemcpyAsync"), nullptr);
  EXPECT_NE(Find(trace, "loop_fusion_kernel"), nullptr);
  EXPECT_EQ(trace.slices().size(), 5u);
}

TEST(XPlaneReaderTest, GzipAndDetection) {
  const std::string bytes = Encode(GpuSpace());
  std::string gz(compressBound(static_cast<uLong>(bytes.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  deflate(&z, Z_FINISH);
  gz.resize(z.total_out);
  deflateEnd(&z);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(gz, &trace, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kXPlane);
  EXPECT_EQ(trace.slices().size(), 6u);
  // Not an XSpace: JSON, a protobuf whose first plane has no name, random bytes.
  EXPECT_NE(DetectTraceFormatFromMemory(R"({"traceEvents": []})"), TraceFormat::kXPlane);
  // (Both protobufs are well formed TracePacket streams, which the Perfetto reader may claim.)
  EXPECT_NE(DetectTraceFormatFromMemory(std::string("\x0a\x02\x08\x01", 4)), TraceFormat::kXPlane);
  EXPECT_NE(DetectTraceFormatFromMemory(std::string("\x0a\x05\x12\x03\x01\x02\x03", 7)),
            TraceFormat::kXPlane);
}

// XProf's trace viewer JSON (the documented shape: displayTimeUnit "ns", a pid per plane named by
// process_name, a thread per line, ts / dur as ps / 1e6 with %.17g, no categories), read by the
// Kineto JSON reader: times exact, and the events mean what the XPlane reader makes of them.
TEST(XprofJsonTest, FractionalMicrosecondsAndDeviceEvents) {
  constexpr char kJson[] = R"json({"displayTimeUnit":"ns","metadata":{"highres-ticks":true},
  "traceEvents":[
  {"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},
  {"ph":"M","pid":1,"tid":13,"name":"thread_name","args":{"name":"Stream #13(compute)"}},
  {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}},
  {"ph":"M","pid":701,"name":"process_name","args":{"name":"/host:CPU"}},
  {"ph":"M","pid":701,"tid":5,"name":"thread_name","args":{"name":"python3"}},
  {"pid":701,"tid":5,"name":"PjitFunction(f)","ts":1000.0000000000001,"dur":50.5,"ph":"X"},
  {"pid":701,"tid":5,"name":"cuLaunchKernel","ts":1010.25,"dur":2.0005,"ph":"X",
   "args":{"correlation_id":"7"}},
  {"pid":1,"tid":13,"name":"loop_fusion","ts":1020.1234565,"dur":3.0004999999999999,"ph":"X",
   "args":{"correlation_id":7,"hlo_op":"fusion.1"}},
  {"pid":1,"tid":13,"name":"copy.3","ts":1030.5,"dur":1,"ph":"X","args":{}},
  {"pid":1,"tid":2,"name":"fusion.1","ts":1020.1234565,"dur":3.0004999999999999,"ph":"X"}]})json";
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(kJson, &trace, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kKinetoJson);
  EXPECT_EQ(trace.metadata().device_type, "CUDA");
  const Slice* kernel = Find(trace, "loop_fusion");
  const Slice* copy = Find(trace, "copy.3");
  const Slice* launch = Find(trace, "cuLaunchKernel");
  ASSERT_TRUE(kernel && copy && launch);
  // Microseconds, not ns (displayTimeUnit only says how they are displayed): 1020123456.5 ps is
  // 1020123 ns; 3000500 ps (written 3.0004999999999999) is 3001 ns, half up.
  EXPECT_EQ(kernel->ts_ns, 1'020'123);
  EXPECT_EQ(kernel->dur_ns, 3'001);
  EXPECT_EQ(launch->dur_ns, 2'001);  // 2.0005 us = 2000.5 ns
  EXPECT_EQ(kernel->kind, ActivityKind::kKernel);
  EXPECT_EQ(copy->kind, ActivityKind::kMemcpy);
  EXPECT_EQ(launch->kind, ActivityKind::kRuntime);
  const uint32_t k = static_cast<uint32_t>(kernel - trace.slices().data());
  EXPECT_EQ(&trace.slices()[trace.Link(k).runtime], launch);
  EXPECT_EQ(trace.Str(trace.slices()[trace.Link(k).op].name), "fusion.1");
  // TraceLens's JAX timeline on these events: busy = the kernel and the copy, the copy memcpy
  // (by name) though nothing launched it.
  const DeviceTimeline tl = ComputeDeviceTimeline(trace);
  EXPECT_EQ(tl.busy_ns, 3'001 + 1'000);
  EXPECT_EQ(tl.total_ns, 1'031'500 - 1'020'123);
  EXPECT_EQ(tl.computation_ns, 3'001);
  EXPECT_EQ(tl.total_memcpy_ns, 1'000);
}

}  // namespace
}  // namespace opscope
