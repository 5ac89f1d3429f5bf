// End-to-end tests of the legacy Neuron JSON reader: device profiles and profiler 2.x system
// profiles generated here from the structure the Neuron SDK documentation gives
// (../shared/reference/neuron-profile-json.md), opened through ImportTrace and
// ImportTraceFromMemory: lanes, instruction counts, exact times, counters, links, and the errors
// of truncated, wrong-typed and incomplete files.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/neuron_device.h"
#include "opscope/trace.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

// A device profile: `n` instructions over three engines, 100 ns apart, each 40 + i ns long,
// starting at device time `t0`; numbers written as strings where `strings` (the profiler may).
std::string DeviceProfile(int n, int64_t t0, int nc, bool strings = false) {
  static const char* kLabels[] = {"TensorMatrix", "Vector", "Scalar"};
  static const char* kOpcodes[] = {"MATMUL", "TENSOR_TENSOR", "ACTIVATE"};
  std::string s =
      "{\"summary\": [{\"total_time\": 0.017, \"event_count\": " + std::to_string(n) +
      ", \"nc_idx\": " + (strings ? "\"" + std::to_string(nc) + "\"" : std::to_string(nc)) +
      ", \"nd_idx\": 2}],\n\"instruction\": [";
  for (int i = 0; i < n; ++i) {
    const std::string ts = std::to_string(t0 + 100 * i), dur = std::to_string(40 + i);
    s += std::string(i ? ",\n" : "") + "{\"timestamp\": " + (strings ? "\"" + ts + "\"" : ts) +
         ", \"duration\": " + dur + ", \"label\": \"" + kLabels[i % 3] +
         "\", \"hlo_name\": \"%add.1 = add(%dot, %c)\", \"opcode\": \"" + kOpcodes[i % 3] +
         "\", \"operands\": \"S[5] (Tensor) src=fp16@0x5600 3*128\"}";
  }
  return s + "]}";
}

// A system profile: a framework op containing nrt_execute (parent of nc_exec_running), a tensor
// write, a collective, host memory and CPU samples.
std::string SystemProfile(int64_t t0) {
  const auto t = [&](int64_t d) { return std::to_string(t0 + d); };
  return "{\"trace_events\": [\n"
         "{\"duration\": 5000, \"group\": \"framework-77\", \"instance_id\": \"i-0abc\", \"name\": "
         "\"PjitFunction(step)\", \"process_id\": \"701\", \"thread_id\": 77, \"timestamp\": " +
         t(0) +
         ", \"type\": 99999},\n"
         "{\"duration\": 3000, \"group\": \"nrt-nc-001\", \"id\": 5, \"parent_id\": 0, "
         "\"instance_id\": \"i-0abc\", \"lnc_idx\": \"1\", \"name\": \"nrt_execute\", "
         "\"process_id\": \"701\", \"thread_id\": 77, \"timestamp\": " +
         t(1000) +
         ", \"type\": 3, \"model_name\": \"step\"},\n"
         "{\"duration\": 2000, \"group\": \"nrt-nc-001\", \"id\": 6, \"parent_id\": 5, "
         "\"instance_id\": \"i-0abc\", \"lnc_idx\": \"1\", \"name\": \"nc_exec_running\", "
         "\"process_id\": \"701\", \"thread_id\": 77, \"timestamp\": " +
         t(1500) +
         ", \"type\": 20},\n"
         "{\"duration\": 500, \"group\": \"nrt-nc-001\", \"instance_id\": \"i-0abc\", \"lnc_idx\": "
         "\"1\", \"name\": \"cc_running\", \"process_id\": \"701\", \"thread_id\": 77, "
         "\"timestamp\": " +
         t(2000) +
         ", \"type\": 21},\n"
         "{\"duration\": 300, \"group\": \"nrt-nc-001\", \"id\": 1, \"parent_id\": 0, "
         "\"instance_id\": \"i-0abc\", \"lnc_idx\": \"1\", \"name\": \"nrt_tensor_write\", "
         "\"process_id\": \"701\", \"size\": \"4\", \"tensor_id\": \"4900392441224765051\", "
         "\"thread_id\": 77, \"timestamp\": " +
         t(200) +
         ", \"type\": 11}],\n"
         "\"mem_usage\": [{\"duration\": 1, \"instance_id\": \"i-0abc\", \"percent_usage\": 9.5, "
         "\"timestamp\": " +
         t(100) +
         ", \"usage\": 51805806592}],\n"
         "\"cpu_util\": [{\"cpu_id\": \"47\", \"duration\": 1, \"instance_id\": \"i-0abc\", "
         "\"timestamp\": " +
         t(150) + ", \"util\": 2.5}]}";
}

class NeuronJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("opscope_neuron_json_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

// Slices per track name.
std::map<std::string, int> Lanes(const Trace& t) {
  std::map<std::string, int> lanes;
  for (const Slice& s : t.slices()) ++lanes[std::string(t.Str(t.tracks()[s.track].name))];
  return lanes;
}

TEST_F(NeuronJsonTest, DeviceProfileLanesTimesAndArgs) {
  const std::string path = Write("profile.json", DeviceProfile(30, 10261883214, 1));
  EXPECT_EQ(DetectTraceFormat(path), TraceFormat::kNeuronJson);
  Trace t;
  ImportStats stats;
  const Status st = ImportTrace(path, &t, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.format, TraceFormat::kNeuronJson);
  EXPECT_EQ(TraceFormatName(stats.format), "neuron-json");
  const auto lanes = Lanes(t);
  EXPECT_EQ(lanes.at("TensorMatrix"), 10);
  EXPECT_EQ(lanes.at("Vector"), 10);
  EXPECT_EQ(lanes.at("Scalar"), 10);
  EXPECT_EQ(lanes.at("nc_exec (execution queue)"), 1);  // synthesized, spanning them all
  EXPECT_EQ(t.metadata().base_time_ns, 10261883214);
  EXPECT_EQ(t.metadata().device_type, "NEURON");
  int instructions = 0;
  for (const Slice& s : t.slices()) {
    if (s.kind != ActivityKind::kInstruction) continue;
    const int64_t i = s.ts_ns / 100;
    EXPECT_EQ(s.ts_ns, 100 * i);
    EXPECT_EQ(s.dur_ns, 40 + i);
    EXPECT_NE(s.external_id, 0);
    const std::string name(t.Str(s.name));
    EXPECT_EQ(name, i % 3 == 0 ? "MATMUL" : i % 3 == 1 ? "TENSOR_TENSOR" : "ACTIVATE");
    EXPECT_EQ(t.FindArg(s.args, "opcode").value_or(""), "\"" + name + "\"") << t.ArgsJson(s.args);
    EXPECT_EQ(t.FindArg(s.args, "hlo_name").value_or(""), "\"%add.1 = add(%dot, %c)\"");
    EXPECT_TRUE(t.FindArg(s.args, "operands").has_value());
    ++instructions;
  }
  EXPECT_EQ(instructions, 30);
  bool device = false;
  for (const Process& p : t.processes()) device |= t.Str(p.name) == "NeuronCore 1";
  EXPECT_TRUE(device);
  bool summary = false;
  for (const auto& [key, value] : t.metadata().extra) {
    if (key == "neuronProfile") {
      summary =
          value.find("{\"device\":\"NeuronCore 1\",\"total_time\":0.017,") != std::string::npos;
    }
  }
  EXPECT_TRUE(summary);
}

TEST_F(NeuronJsonTest, NumbersWrittenAsStrings) {
  Trace t;
  const std::string text = DeviceProfile(6, 5000, 3, /*strings=*/true);
  ASSERT_TRUE(ImportTraceFromMemory(text, &t).ok());
  EXPECT_EQ(t.metadata().base_time_ns, 5000);
  EXPECT_EQ(Lanes(t).at("TensorMatrix"), 2);
  bool nc3 = false;
  for (const Process& p : t.processes()) nc3 |= t.Str(p.name) == "NeuronCore 3";
  EXPECT_TRUE(nc3);
}

TEST_F(NeuronJsonTest, SystemProfileWithDeviceProfileBeside) {
  const int64_t t0 = 1729888371056597613;
  Write("system_profile.json", SystemProfile(t0));
  Write("device_profile_model_42.json", DeviceProfile(9, 777000, 1));
  EXPECT_EQ(DetectTraceFormat(dir_.string()), TraceFormat::kNeuronJson);
  for (const std::string& path : {dir_.string(), (dir_ / "system_profile.json").string()}) {
    Trace t;
    ImportStats stats;
    const Status st = ImportTrace(path, &t, &stats);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(t.metadata().base_time_ns, t0);
    const auto lanes = Lanes(t);
    EXPECT_EQ(lanes.at("thread 77"), 3);  // framework op, nrt_execute, nrt_tensor_write
    EXPECT_EQ(lanes.at("nc_exec (execution queue)"), 1);
    EXPECT_EQ(lanes.at("collectives"), 1);
    EXPECT_EQ(lanes.at("TensorMatrix"), 3);
    int64_t exec_start = -1, exec_id = 0, exec_corr = 0, runtime_corr = 0;
    for (const Slice& s : t.slices()) {
      const std::string name(t.Str(s.name));
      if (name == "nc_exec_running") {
        exec_start = s.ts_ns;
        exec_id = s.external_id;
        exec_corr = s.correlation;
      }
      if (name == "nrt_execute") runtime_corr = s.correlation;
    }
    EXPECT_EQ(exec_start, 1500);  // exact ns past the first event
    EXPECT_NE(exec_corr, 0);
    EXPECT_EQ(exec_corr, runtime_corr);  // linked by parent_id
    // The device profile's first instruction lands on the execution's start, inside it.
    int64_t first = INT64_MAX;
    for (const Slice& s : t.slices()) {
      if (s.kind != ActivityKind::kInstruction) continue;
      first = std::min(first, s.ts_ns);
      EXPECT_EQ(s.external_id, exec_id);
    }
    EXPECT_EQ(first, 1500);
    std::map<std::string, double> counters;
    for (const CounterSample& c : t.counters()) {
      counters[std::string(t.Str(t.tracks()[c.track].name))] = c.value;
    }
    EXPECT_EQ(counters.at("host memory in use (bytes)"), 51805806592.0);
    EXPECT_EQ(counters.at("host memory in use (%)"), 9.5);
    EXPECT_EQ(counters.at("CPU 47 utilization (%)"), 2.5);
    EXPECT_FALSE(t.flows().empty());
  }
}

// What `opscope report --json` prints: key_averages puts the execution and the collective (2.5 us
// on the device) under the framework op that launched them.
TEST_F(NeuronJsonTest, ReportReadsTheSystemProfile) {
  Write("system_profile.json", SystemProfile(1729888371056597613));
  Write("device_profile_model_42.json", DeviceProfile(9, 777000, 1));
  Trace t;
  ASSERT_TRUE(ImportTrace(dir_.string(), &t).ok());
  const std::string report = ReportJson(t);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(report).get(root), simdjson::SUCCESS) << report.substr(0, 400);
  EXPECT_EQ(root["device_type"].get_string().value(), "NEURON");
  double step_device_us = -1;
  for (simdjson::dom::element row : root["key_averages"]["rows"].get_array()) {
    if (row["name"].get_string().value() == "PjitFunction(step)") {
      step_device_us = row["device_time_total_us"].get_double().value();
    }
  }
  EXPECT_DOUBLE_EQ(step_device_us, 2.5);
}

TEST_F(NeuronJsonTest, DetectionKeepsKinetoAndNeuronApart) {
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"trace_events\": []}"), TraceFormat::kNeuronJson);
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"cpu_util\": [], \"mem_usage\": []}"),
            TraceFormat::kNeuronJson);
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"summary\": [{}], \"instruction\": []}"),
            TraceFormat::kNeuronJson);
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"traceEvents\": [], \"trace_events\": []}"),
            TraceFormat::kKinetoJson);
  // A summary alone, or keys with other values, claim nothing.
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"summary\": {\"rows\": 3}, \"figures\": []}"),
            TraceFormat::kUnknown);
  EXPECT_EQ(DetectTraceFormatFromMemory("{\"instruction\": \"add\"}"), TraceFormat::kUnknown);
  // A nested "trace_events" key does not make a Kineto trace a Neuron one.
  EXPECT_EQ(DetectTraceFormatFromMemory(
                "{\"schemaVersion\": 1, \"x\": {\"trace_events\": 1}, \"traceEvents\": []}"),
            TraceFormat::kKinetoJson);
}

TEST_F(NeuronJsonTest, TruncatedFileKeepsCompleteEntries) {
  const std::string full = DeviceProfile(30, 1000, 0);
  const std::string cut = full.substr(0, full.find("\"timestamp\": 3000") + 5);  // inside entry 20
  Trace t;
  const Status st = ImportTrace(Write("profile.json", cut), &t);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("profile.json"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ends early"), std::string::npos) << st.message();
  int instructions = 0;
  for (const Slice& s : t.slices()) instructions += s.kind == ActivityKind::kInstruction;
  EXPECT_EQ(instructions, 20);
}

TEST_F(NeuronJsonTest, WrongTypeNamesThePlace) {
  std::string text = DeviceProfile(5, 1000, 0);
  const size_t at = text.find("\"duration\": 43");
  text.replace(at, 14, "\"duration\": []");
  Trace t;
  const Status st = ImportTrace(Write("profile.json", text), &t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("instruction[3].duration: expected an integer (ns), found an array"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("byte "), std::string::npos) << st.message();
  int instructions = 0;
  for (const Slice& s : t.slices()) instructions += s.kind == ActivityKind::kInstruction;
  EXPECT_EQ(instructions, 3);  // the entries before it
}

TEST_F(NeuronJsonTest, MissingFieldsNameTheEntry) {
  Trace t;
  Status st = ImportTraceFromMemory(
      "{\"instruction\": [{\"timestamp\": 1, \"duration\": 2, \"label\": \"Pool\"}, "
      "{\"duration\": 2, \"label\": \"Pool\"}]}",
      &t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("instruction[1]: no 'timestamp'"), std::string::npos) << st.message();
  EXPECT_EQ(Lanes(t).at("Pool"), 1);
  st = ImportTraceFromMemory(
      "{\"trace_events\": [{\"timestamp\": 5, \"name\": \"a\"}, "
      "{\"name\": \"b\"}]}",
      &t);
  EXPECT_NE(st.message().find("trace_events[1]: no 'timestamp'"), std::string::npos)
      << st.message();
  st = ImportTraceFromMemory("{\"mem_usage\": [{\"timestamp\": 5, \"usage\": \"lots\"}]}", &t);
  EXPECT_NE(st.message().find("mem_usage[0].usage: expected a number"), std::string::npos)
      << st.message();
  st = ImportTraceFromMemory("{\"summary\": [{\"nd_idx\": nul}], \"instruction\": []}", &t);
  EXPECT_NE(st.message().find("summary[0].nd_idx: malformed value"), std::string::npos)
      << st.message();
  // A file a folder names as a device profile is read as one whatever its content.
  Write("device_profile_model_7.json", "{\"instruction\": {\"timestamp\": 5}}");
  st = ImportTrace(dir_.string(), &t);
  EXPECT_NE(st.message().find("device_profile_model_7.json: byte "), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("instruction: expected an array"), std::string::npos) << st.message();
}

TEST_F(NeuronJsonTest, UnknownKeysAreCountedInAWarning) {
  Trace t;
  ASSERT_TRUE(
      ImportTraceFromMemory("{\"summary\": [], \"instruction\": [], \"dma\": []}", &t).ok());
  bool warned = false;
  for (const std::string& w : t.metadata().warnings) warned |= w.find("dma") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Entries on a DMA queue's row are DMA transfers: the NeuronCore section's DMA figures, not an
// engine. By hand: intervals [1000, 1200) and [1300, 1400) on qSyncIO, [1350, 1450) on qPool: busy
// (their union) 200 + 150 = 350 ns; bytes 4096 + 8192 + 1000 (a string count, a `size`).
TEST_F(NeuronJsonTest, DmaLanesFeedTheDeviceSection) {
  const std::string path = Write("dma.json", R"({"summary": [{"nc_idx": 0}], "instruction": [
 {"timestamp": 1000, "duration": 100, "label": "TensorMatrix", "opcode": "MATMUL"},
 {"timestamp": 1000, "duration": 200, "label": "DMA queue qSyncIO", "opcode": "DMA", "bytes": 4096},
 {"timestamp": 1300, "duration": 100, "label": "DMA queue qSyncIO", "opcode": "DMA", "bytes": "8192"},
 {"timestamp": 1350, "duration": 100, "label": "dma_qPool", "opcode": "DMA", "size": 1000}]})");
  Trace t;
  ASSERT_TRUE(ImportTrace(path, &t).ok());
  const auto lanes = Lanes(t);
  EXPECT_EQ(lanes.at("DMA queue qSyncIO"), 2);
  EXPECT_EQ(lanes.at("DMA queue qPool"), 1);
  const NeuronDeviceReport r = ComputeNeuronDevice(t);
  EXPECT_EQ(r.dma.packets, 3);
  EXPECT_EQ(r.dma.bytes, 4096 + 8192 + 1000);
  EXPECT_EQ(r.dma.busy_ns, 350);
  EXPECT_EQ(r.dma.queues, 2);
  EXPECT_DOUBLE_EQ(r.dma.gbps(), (4096 + 8192 + 1000) / 350.0);
  ASSERT_EQ(r.engines.size(), 1u);  // the DMA rows are no engine
  EXPECT_EQ(r.engines[0].engine, "TensorMatrix");
  EXPECT_EQ(r.engines[0].instructions, 1);
  // The report's JSON carries them under neuron_device.dma.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string report = ReportJson(t);
  ASSERT_EQ(parser.parse(report).get(root), simdjson::SUCCESS);
  EXPECT_EQ(root["neuron_device"]["dma"]["bytes"].get_int64().value(), 4096 + 8192 + 1000);
  EXPECT_EQ(root["neuron_device"]["dma"]["busy_ns"].get_int64().value(), 350);
}

TEST_F(NeuronJsonTest, PartSelectsOneHost) {
  Write("system_profile.json", SystemProfile(1729888371056597613));
  ImportOptions options;
  options.part = "i-other/1";
  Trace t;
  ASSERT_TRUE(ImportTrace(dir_.string(), &t, nullptr, options).ok());
  EXPECT_TRUE(t.slices().empty());
  options.part = "i-0abc/701";
  ASSERT_TRUE(ImportTrace(dir_.string(), &t, nullptr, options).ok());
  EXPECT_EQ(t.slices().size(), 5u);
}

}  // namespace
}  // namespace opscope
