// The Perfetto reader on traces built here, field by field (protozero, with the field numbers of
// trace/perfetto_protos.h): detection, compressed packets, errors and partial files naming the
// packet and byte, incremental state, and the kind and device rules docs/formats.md states.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <functional>
#include <protozero/pbf_writer.hpp>
#include <string>

#include "opscope/import.h"
#include "trace/perfetto_protos.h"

namespace opscope {
namespace {

namespace pp = perfetto::packet;
namespace pe = perfetto::event;
namespace pt = perfetto::track;
using protozero::pbf_writer;

// A trace of packets, each written by a function given the packet's writer.
class TraceBuilder {
 public:
  TraceBuilder& Packet(const std::function<void(pbf_writer&)>& fill) {
    pbf_writer trace(bytes_);
    pbf_writer packet(trace, perfetto::trace::kPacket);
    fill(packet);
    return *this;
  }
  // A thread track (uuid) of process `pid` named `name`, on sequence 1.
  TraceBuilder& Thread(uint64_t uuid, int32_t pid, int64_t tid, const std::string& name) {
    return Packet([&](pbf_writer& p) {
      p.add_uint32(pp::kTrustedPacketSequenceId, 1);
      pbf_writer d(p, pp::kTrackDescriptor);
      d.add_uint64(pt::kUuid, uuid);
      pbf_writer t(d, pt::kThread);
      t.add_int32(pt::kThreadPid, pid);
      t.add_int64(pt::kThreadTid, tid);
      t.add_string(pt::kThreadName, name);
    });
  }
  TraceBuilder& Process(uint64_t uuid, int32_t pid, const std::string& name) {
    return Packet([&](pbf_writer& p) {
      p.add_uint32(pp::kTrustedPacketSequenceId, 1);
      pbf_writer d(p, pp::kTrackDescriptor);
      d.add_uint64(pt::kUuid, uuid);
      pbf_writer process(d, pt::kProcess);
      process.add_int32(pt::kProcessPid, pid);
      process.add_string(pt::kProcessName, name);
    });
  }
  TraceBuilder& Named(uint64_t uuid, uint64_t parent, const std::string& name) {
    return Packet([&](pbf_writer& p) {
      p.add_uint32(pp::kTrustedPacketSequenceId, 1);
      pbf_writer d(p, pp::kTrackDescriptor);
      d.add_uint64(pt::kUuid, uuid);
      d.add_uint64(pt::kParentUuid, parent);
      d.add_string(pt::kName, name);
    });
  }
  // A slice begin or end (type 1 / 2) on track `uuid` at `ts`.
  TraceBuilder& Event(uint64_t uuid, uint64_t ts, uint32_t type, const std::string& name = "",
                      const std::string& category = "") {
    return Packet([&](pbf_writer& p) {
      p.add_uint64(pp::kTimestamp, ts);
      p.add_uint32(pp::kTrustedPacketSequenceId, 1);
      pbf_writer e(p, pp::kTrackEvent);
      e.add_uint32(pe::kType, type);
      e.add_uint64(pe::kTrackUuid, uuid);
      if (!name.empty()) e.add_string(pe::kName, name);
      if (!category.empty()) e.add_string(pe::kCategories, category);
    });
  }
  TraceBuilder& Slice(uint64_t uuid, uint64_t ts, uint64_t end, const std::string& name,
                      const std::string& category = "") {
    Event(uuid, ts, pe::kTypeSliceBegin, name, category);
    return Event(uuid, end, pe::kTypeSliceEnd);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

Status Import(const std::string& bytes, Trace* trace, ImportStats* stats) {
  return ImportTraceFromMemory(bytes, trace, stats);
}

TEST(PerfettoReader, DetectsByContentAndClaimsNothingElse) {
  TraceBuilder b;
  b.Thread(1, 10, 11, "main").Slice(1, 100, 200, "op");
  EXPECT_EQ(DetectTraceFormatFromMemory(b.bytes()), TraceFormat::kPerfetto);
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"traceEvents\": []}"), TraceFormat::kKinetoJson);
  // Newlines (0x0a, a Perfetto trace's first byte) before JSON are JSON's whitespace.
  EXPECT_EQ(DetectTraceFormatFromMemory("\n\n{\"traceEvents\": []}"), TraceFormat::kKinetoJson);
  EXPECT_EQ(DetectTraceFormatFromMemory(std::string("\x0a\x05hello", 7)), TraceFormat::kUnknown);
  std::string random(4096, '\0');
  uint32_t x = 12345;
  for (char& c : random) c = static_cast<char>((x = x * 1103515245 + 12345) >> 16);
  random[0] = 0x0a;
  EXPECT_EQ(DetectTraceFormatFromMemory(random), TraceFormat::kUnknown);
}

// The same packets, plain and inside compressed_packets (zlib, zstd), give the same trace.
TEST(PerfettoReader, ReadsCompressedPackets) {
  TraceBuilder inner;
  inner.Thread(1, 10, 11, "main").Slice(1, 100, 200, "outer").Slice(1, 120, 150, "inner");
  std::string zlib(compressBound(inner.bytes().size()), '\0');
  uLongf zlib_size = zlib.size();
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(zlib.data()), &zlib_size,
                     reinterpret_cast<const Bytef*>(inner.bytes().data()), inner.bytes().size()),
            Z_OK);
  zlib.resize(zlib_size);
  std::string zstd(ZSTD_compressBound(inner.bytes().size()), '\0');
  zstd.resize(
      ZSTD_compress(zstd.data(), zstd.size(), inner.bytes().data(), inner.bytes().size(), 3));
  for (const auto& [field, payload] :
       {std::pair(pp::kCompressedPackets, zlib), std::pair(pp::kZstdCompressedPackets, zstd)}) {
    TraceBuilder outer;
    outer.Packet([&](pbf_writer& p) {
      p.add_uint32(pp::kTrustedPacketSequenceId, 1);
      p.add_bytes(field, payload);
    });
    Trace trace;
    ImportStats stats;
    ASSERT_TRUE(Import(outer.bytes(), &trace, &stats).ok());
    ASSERT_EQ(trace.slices().size(), 2u);
    EXPECT_EQ(trace.Str(trace.slices()[1].name), "inner");
    EXPECT_EQ(trace.slices()[1].depth, 1);
    EXPECT_EQ(trace.slices()[0].dur_ns, 100);
    EXPECT_EQ(stats.skipped, 0u);
  }
}

TEST(PerfettoReader, TruncatedFileKeepsWhatCameBeforeWithAWarning) {
  TraceBuilder b;
  b.Thread(1, 10, 11, "main").Slice(1, 100, 200, "a").Slice(1, 300, 400, "b");
  const std::string cut = b.bytes().substr(0, b.bytes().size() - 3);  // inside b's end packet
  Trace trace;
  ImportStats stats;
  const Status st = Import(cut, &trace, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(trace.slices().size(), 2u);  // b began; its end was cut off
  EXPECT_EQ(trace.slices()[1].dur_ns, 0);
  ASSERT_FALSE(stats.warnings.empty());
  EXPECT_NE(stats.warnings[0].find("ends inside packet 4 (byte "), std::string::npos)
      << stats.warnings[0];
}

TEST(PerfettoReader, BadBytesNameThePacketAndByte) {
  TraceBuilder b;
  b.Thread(1, 10, 11, "main").Slice(1, 100, 200, "a");
  const size_t good = b.bytes().size();
  // A packet whose track event is not a message: skipped, the rest read.
  b.Packet([](pbf_writer& p) {
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    p.add_string(pp::kTrackEvent, std::string("\xff\xff\xff", 3));
  });
  b.Slice(1, 300, 400, "c");
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(Import(b.bytes(), &trace, &stats).ok());
  EXPECT_EQ(trace.slices().size(), 2u);
  EXPECT_EQ(stats.skipped, 1u);
  ASSERT_FALSE(stats.warnings.empty());
  EXPECT_NE(stats.warnings[0].find("packet 3 at byte " + std::to_string(good + 2)),
            std::string::npos)
      << stats.warnings[0];
  // Bytes that are no Trace field at all (wire type 7): an error at that packet and byte, the
  // packets before it kept.
  std::string broken = b.bytes().substr(0, good) + std::string("\x0f\x01\x02", 3);
  Trace partial;
  const Status st = Import(broken, &partial, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.offset(), good);
  EXPECT_NE(st.message().find("packet 3 at byte " + std::to_string(good)), std::string::npos)
      << st.message();
  EXPECT_EQ(partial.slices().size(), 1u);
}

TEST(PerfettoReader, SkipsPacketsThatNeedLostIncrementalState) {
  TraceBuilder b;
  b.Thread(1, 10, 11, "main");
  b.Packet([](pbf_writer& p) {  // interned names, but the sequence never cleared its state
    p.add_uint64(pp::kTimestamp, 100);
    p.add_uint32(pp::kTrustedPacketSequenceId, 2);
    p.add_uint32(pp::kSequenceFlags, pp::kSeqNeedsIncrementalState);
    pbf_writer e(p, pp::kTrackEvent);
    e.add_uint32(pe::kType, pe::kTypeInstant);
    e.add_uint64(pe::kTrackUuid, 1);
    e.add_uint64(pe::kNameIid, 1);
  });
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(Import(b.bytes(), &trace, &stats).ok());
  EXPECT_EQ(trace.instants().size(), 0u);
  EXPECT_EQ(stats.skipped, 1u);
}

// An extra counter value names its track; one that names a thread track is dropped with a
// warning, as a counter event on such a track is (it once became a sample of the thread track,
// which the writer then left out: the round trip lost it).
TEST(PerfettoReader, ExtraCounterValuesOnlyGoToCounterTracks) {
  TraceBuilder b;
  b.Thread(1, 10, 11, "main");
  b.Packet([](pbf_writer& p) {
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    pbf_writer d(p, pp::kTrackDescriptor);
    d.add_uint64(pt::kUuid, 2);
    d.add_string(pt::kName, "bytes");
    pbf_writer c(d, pt::kCounter);
    c.add_uint32(pt::kCounterUnit, 3);  // bytes
  });
  b.Packet([](pbf_writer& p) {
    p.add_uint64(pp::kTimestamp, 100);
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    pbf_writer e(p, pp::kTrackEvent);
    e.add_uint32(pe::kType, pe::kTypeInstant);
    e.add_uint64(pe::kTrackUuid, 1);
    e.add_string(pe::kName, "tick");
    const uint64_t tracks[] = {2, 1};  // a counter track, then the thread track
    e.add_packed_uint64(pe::kExtraCounterTrackUuids, std::begin(tracks), std::end(tracks));
    const int64_t values[] = {7, 9};
    e.add_packed_int64(pe::kExtraCounterValues, std::begin(values), std::end(values));
  });
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(Import(b.bytes(), &trace, &stats).ok());
  ASSERT_EQ(trace.counters().size(), 1u);
  EXPECT_EQ(trace.counters()[0].value, 7.0);
  EXPECT_EQ(trace.Str(trace.tracks()[trace.counters()[0].track].name), "bytes");
  bool warned = false;
  for (const std::string& w : stats.warnings) {
    warned = warned || w.find("not a counter track") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

// The reader takes the fields most events carry straight off the bytes and reads any other event
// or packet again whole: events that leave that path half way (after a field it took) read as
// they would whole, and annotations of other shapes than an interned name and one value too.
TEST(PerfettoReader, EventsLeavingTheCommonFieldsReadWhole) {
  namespace pi = perfetto::interned;
  namespace pa = perfetto::annotation;
  auto entry = [](pbf_writer& interned, uint32_t table, uint64_t iid, const std::string& text) {
    pbf_writer e(interned, table);
    e.add_uint64(pi::kIid, iid);
    e.add_string(pi::kName, text);
  };
  TraceBuilder b;
  b.Thread(1, 10, 11, "main");
  b.Packet([&](pbf_writer& p) {  // common fields only, interned data among them
    p.add_uint64(pp::kTimestamp, 100);
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    p.add_uint32(pp::kSequenceFlags, pp::kSeqIncrementalStateCleared);
    {
      pbf_writer interned(p, pp::kInternedData);
      entry(interned, pi::kEventNames, 1, "interned");
      entry(interned, pi::kDebugAnnotationNames, 1, "External id");
      entry(interned, pi::kDebugAnnotationNames, 2, "flag");
    }
    pbf_writer e(p, pp::kTrackEvent);
    e.add_uint32(pe::kType, pe::kTypeSliceBegin);
    e.add_uint64(pe::kTrackUuid, 1);
    e.add_uint64(pe::kNameIid, 1);
    {
      pbf_writer a(e, pe::kDebugAnnotations);
      a.add_uint64(pa::kNameIid, 1);
      a.add_int64(pa::kIntValue, 42);
    }
    {
      pbf_writer a(e, pe::kDebugAnnotations);
      a.add_uint64(pa::kNameIid, 2);
      a.add_bool(pa::kBoolValue, true);
    }
    e.add_uint64(pe::kCorrelationId, 7);
  });
  b.Packet([](pbf_writer& p) {  // a packet field past the event: the packet read again
    p.add_uint64(pp::kTimestamp, 200);
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    {
      pbf_writer e(p, pp::kTrackEvent);
      e.add_uint32(pe::kType, pe::kTypeSliceEnd);
      e.add_uint64(pe::kTrackUuid, 1);
    }
    p.add_uint32(pp::kTimestampClockId, perfetto::clock::kBoottime);
  });
  b.Packet([](pbf_writer& p) {  // an inline name after the type and track: the event read again
    p.add_uint64(pp::kTimestamp, 300);
    p.add_uint32(pp::kTrustedPacketSequenceId, 1);
    pbf_writer e(p, pp::kTrackEvent);
    e.add_uint32(pe::kType, pe::kTypeSliceBegin);
    e.add_uint64(pe::kTrackUuid, 1);
    e.add_string(pe::kName, "inline");
    {
      pbf_writer a(e, pe::kDebugAnnotations);  // a double: not an interned name and a varint
      a.add_uint64(pa::kNameIid, 2);
      a.add_double(pa::kDoubleValue, 0.5);
    }
    {
      pbf_writer a(e, pe::kDebugAnnotations);  // an inline name
      a.add_string(pa::kName, "n");
      a.add_uint64(pa::kUintValue, 3);
    }
  });
  b.Event(1, 400, pe::kTypeSliceEnd);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(Import(b.bytes(), &trace, &stats).ok());
  EXPECT_EQ(stats.skipped, 0u);
  ASSERT_EQ(trace.slices().size(), 2u);
  const Slice& first = trace.slices()[0];
  EXPECT_EQ(trace.Str(first.name), "interned");
  EXPECT_EQ(first.dur_ns, 100);
  EXPECT_EQ(first.external_id, 42);
  EXPECT_EQ(first.correlation, 7);
  EXPECT_EQ(trace.ArgsJson(first.args), R"({"External id": 42, "flag": true})");
  const Slice& second = trace.slices()[1];
  EXPECT_EQ(trace.Str(second.name), "inline");
  EXPECT_EQ(second.ts_ns - first.ts_ns, 200);
  EXPECT_EQ(second.dur_ns, 100);
  EXPECT_EQ(trace.ArgsJson(second.args), R"({"flag": 0.5, "n": 3})");
}

// docs/formats.md: Kineto's categories give their kinds; otherwise device-like tracks hold
// kernels and other tracks user annotations; device-like by name or by a device category.
TEST(PerfettoReader, KindsAndDeviceTracksFollowTheStatedRules) {
  TraceBuilder b;
  b.Process(1, 10, "python").Thread(2, 10, 11, "main").Process(3, 20, "GPU 0");
  b.Named(4, 3, "compute").Named(5, 1, "queue").Named(6, 1, "stream 7");
  b.Slice(2, 100, 200, "aten::mul", "cpu_op")
      .Slice(2, 300, 400, "my range")
      .Slice(4, 150, 180, "kern")
      .Slice(5, 150, 180, "copy", "gpu_memcpy")
      .Slice(6, 150, 180, "k2");
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(Import(b.bytes(), &trace, &stats).ok());
  auto kind_of = [&](std::string_view name) {
    for (const opscope::Slice& s : trace.slices()) {
      if (trace.Str(s.name) == name) return s.kind;
    }
    return ActivityKind::kOther;
  };
  EXPECT_EQ(kind_of("aten::mul"), ActivityKind::kCpuOp);
  EXPECT_EQ(kind_of("my range"), ActivityKind::kUserAnnotation);
  EXPECT_EQ(kind_of("kern"), ActivityKind::kKernel);  // on a GPU process's track
  EXPECT_EQ(kind_of("copy"), ActivityKind::kMemcpy);  // a device category makes "queue" a device
  EXPECT_EQ(kind_of("k2"), ActivityKind::kKernel);    // a track named "stream ..."
  for (const Track& t : trace.tracks()) {
    const std::string_view name = trace.Str(t.name);
    const bool device = name == "compute" || name == "queue" || name == "stream 7";
    EXPECT_EQ(t.kind == TrackKind::kDeviceStream, device) << name;
  }
  EXPECT_TRUE(trace.HasDeviceActivity());
}

}  // namespace
}  // namespace opscope
