// End-to-end tests of a folder holding a torch.profiler trace and the Neuron profile of the same
// run (src/import/neuron/torch_merge.h): the torch trace written here as Kineto JSON, the profile
// by an independent Parquet writer (parquet-wasm, write_profile.mjs) from a spec written here,
// both opened as one trace through ImportTrace, and key_averages read off it as a user would.
// Needs node (skipped with a message without it).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "opscope/import.h"
#include "opscope/key_averages.h"
#include "opscope/trace.h"
#include "tests/import/neuron/profile_writer.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBase = 1700000000000000000;  // the run's epoch ns

using testing::WriteNeuronProfileFromSpec;
using testing::WriteTextFile;

// One SystemProfileEvents row.
struct Event {
  std::string name, source;
  int64_t start_ns, end_ns;  // past the profile's first_ts_ns
  std::vector<std::string> flows;
  std::string extra;
};

// A system profile of pid 100 / tid 100 on one NeuronCore, whose clock starts at `first_ts_ns`.
std::string SystemProfileSpec(int64_t first_ts_ns, const std::vector<Event>& events) {
  std::string names, sources, starts, ends, flows, extras, ids, durations;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const char* sep = i == 0 ? "" : ",";
    names += fmt::format("{}\"{}\"", sep, e.name);
    sources += fmt::format("{}\"{}\"", sep, e.source);
    starts += fmt::format("{}{}", sep, e.start_ns);
    ends += fmt::format("{}{}", sep, e.end_ns);
    durations += fmt::format("{}{}", sep, e.end_ns - e.start_ns);
    ids += fmt::format("{}{}", sep, i + 1);
    std::string list;
    for (const std::string& f : e.flows) list += (list.empty() ? "\"" : ",\"") + f + "\"";
    flows += fmt::format("{}[{}]", sep, list);
    std::string extra;
    for (char c : e.extra) extra += c == '"' ? std::string("\\\"") : std::string(1, c);
    extras += fmt::format("{}\"{}\"", sep, extra);
  }
  const size_t n = events.size();
  const auto repeat = [n](const std::string& v) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ",") + v;
    return out;
  };
  return fmt::format(
      R"({{"tables":{{
 "SystemProfileMetadata":{{"columns":{{"first_ts_ns":["{}"]}}}},
 "SystemProfileEvents":{{"columns":{{"id":[{}],"name":[{}],"start_ts":[{}],"end_ts":[{}],
  "duration_ns":[{}],"trace_event_source":[{}],"instance_id":[{}],"process_id":[{}],
  "thread_id":[{}],"nc_idx":[{}],"flow_id":[{}],"extra_attributes_json":[{}]}}}}
}}}})",
      first_ts_ns, ids, names, starts, ends, durations, sources, repeat("\"i-0abc\""),
      repeat("100"), repeat("100"), repeat("0"), flows, extras);
}

// The torch trace: aten::mul (External id 1) whose runtime call carries execution id 7 and an ac2g
// flow to the trace's own device event (250 us); aten::add (External id 2) with no ids at all.
std::string TorchTrace(int64_t base_ns) {
  return fmt::format(R"({{"schemaVersion":1,"deviceProperties":[],"baseTimeNanoseconds":{},
"traceEvents":[
 {{"ph":"X","cat":"cpu_op","name":"aten::mul","pid":100,"tid":100,"ts":10.000,"dur":500.000,
   "args":{{"External id":1}}}},
 {{"ph":"X","cat":"privateuse1_runtime","name":"nrta_execute_schedule","pid":100,"tid":100,
   "ts":20.000,"dur":50.000,"args":{{"External id":1,"correlation":11,"execution_id":7}}}},
 {{"ph":"X","cat":"kernel","name":"nc_exec_running","pid":0,"tid":0,"ts":100.000,
   "dur":250.000,"args":{{"External id":1,"correlation":11,"device":0,"stream":0}}}},
 {{"ph":"s","id":11,"pid":100,"tid":100,"ts":20.000,"cat":"ac2g","name":"ac2g"}},
 {{"ph":"f","id":11,"pid":0,"tid":0,"ts":100.000,"cat":"ac2g","name":"ac2g","bp":"e"}},
 {{"ph":"X","cat":"cpu_op","name":"aten::add","pid":100,"tid":100,"ts":600.000,"dur":400.000,
   "args":{{"External id":2}}}},
 {{"ph":"M","name":"process_name","pid":0,"args":{{"name":"NEURON 0"}}}}
]}})",
                     base_ns);
}

// The Neuron profile of the same run: aten::mul's execution (300 us) shares flow id f1 with the
// runtime call that carries execution id 7; aten::add's runtime call and execution (403.3 us)
// carry no ids; a framework event the torch trace has too.
std::vector<Event> RunEvents() {
  return {
      {"aten::mul", "framework", 10000, 510000, {"f1"}, ""},
      {"nrta_execute_schedule", "neuron_rt", 20000, 70000, {"f1"}, R"({"execution_id": 7})"},
      {"nc_exec_running", "neuron_hw", 100000, 400000, {"f1"}, ""},
      {"nrta_execute_schedule", "neuron_rt", 620000, 660000, {}, ""},
      {"nc_exec_running", "neuron_hw", 700000, 1103300, {}, ""},
  };
}

class TorchMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("opscope_torch_merge_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove(dir_.string() + ".spec.json");
    fs::remove((dir_ / "neuron").string() + ".spec.json");
  }
  // A run folder: trace.json beside the profile folder "neuron"; false when no writer.
  bool WriteRun(int64_t torch_base, int64_t neuron_base, const std::vector<Event>& events) {
    WriteTextFile(dir_ / "trace.json", TorchTrace(torch_base));
    return WriteNeuronProfileFromSpec(SystemProfileSpec(neuron_base, events), dir_ / "neuron",
                                      &why_);
  }
  const KeyAverage* Row(const KeyAverages& avg, const std::string& key) {
    for (const KeyAverage& r : avg.rows()) {
      if (r.key == key && !r.is_device) return &r;
    }
    return nullptr;
  }
  static bool HasWarning(const Trace& t, const std::string& part) {
    for (const std::string& w : t.metadata().warnings) {
      if (w.find(part) != std::string::npos) return true;
    }
    return false;
  }

  fs::path dir_;
  std::string why_;
};

TEST_F(TorchMergeTest, OpsGetTheProfilesExecutionTimesLinkedByIdAndByTime) {
  if (!WriteRun(kBase, kBase, RunEvents())) GTEST_SKIP() << why_;
  EXPECT_EQ(DetectTraceFormat(dir_.string()), TraceFormat::kTorchNeuron);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTrace(dir_.string(), &trace, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kTorchNeuron);
  EXPECT_EQ(TraceFormatName(stats.format), "torch-neuron");
  const KeyAverages avg = KeyAverages::FromTrace(trace);
  EXPECT_EQ(avg.device_name(), "NEURON");
  const KeyAverage* mul = Row(avg, "aten::mul");
  const KeyAverage* add = Row(avg, "aten::add");
  ASSERT_NE(mul, nullptr);
  ASSERT_NE(add, nullptr);
  // The profile's executions, not the torch trace's own 250 us device event.
  EXPECT_EQ(mul->self_device_time_total_ns, 300000);  // by id (execution id 7, flow f1)
  EXPECT_EQ(mul->device_time_total_ns, 300000);
  EXPECT_EQ(add->self_device_time_total_ns, 403300);  // by time
  EXPECT_EQ(mul->count, 1);                           // the profile's framework event left out
  // The torch trace's runtime call is the profile's (same execution id): counted once each.
  const KeyAverage* rt = Row(avg, "nrta_execute_schedule");
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->count, 2);
  EXPECT_EQ(avg.unmatched_device_activity(), 0u);
  const std::string table = avg.Table("self_privateuse1_time_total");
  EXPECT_NE(table.find("Self NEURON"), std::string::npos) << table;
  EXPECT_NE(table.find("NEURON total"), std::string::npos) << table;
  EXPECT_NE(table.find("403.300us"), std::string::npos) << table;
  // The runtime calls sit on the op's thread, nested in it.
  for (const Slice& s : trace.slices()) {
    if (trace.Str(s.name) != "nrta_execute_schedule") continue;
    ASSERT_NE(s.parent, kNone);
    EXPECT_EQ(trace.Str(trace.slices()[s.parent].name),
              s.ts_ns < 500000 ? "aten::mul" : "aten::add");
  }
  for (const std::string& w : trace.metadata().warnings) ADD_FAILURE() << "warning: " << w;
  bool info = false;
  for (const auto& [key, value] : trace.metadata().extra) {
    if (key != "neuronMerge") continue;
    info = true;
    EXPECT_NE(value.find("\"linked_by_id\":1"), std::string::npos) << value;
    EXPECT_NE(value.find("\"linked_by_time\":1"), std::string::npos) << value;
    EXPECT_NE(value.find("\"torch_device_events_dropped\":1"), std::string::npos) << value;
  }
  EXPECT_TRUE(info);
}

TEST_F(TorchMergeTest, BaseTimesThatDisagreeAreCorrectedByIdLinkedCallsWithAWarning) {
  // The profile states a first timestamp 5 s off; the shared runtime call places it.
  if (!WriteRun(kBase, kBase + 5000000000, RunEvents())) GTEST_SKIP() << why_;
  Trace trace;
  ASSERT_TRUE(ImportTrace(dir_.string(), &trace).ok());
  EXPECT_TRUE(HasWarning(trace, "base times of the torch trace and the Neuron profile disagree"));
  const KeyAverages avg = KeyAverages::FromTrace(trace);
  ASSERT_NE(Row(avg, "aten::add"), nullptr);
  EXPECT_EQ(Row(avg, "aten::mul")->self_device_time_total_ns, 300000);
  EXPECT_EQ(Row(avg, "aten::add")->self_device_time_total_ns, 403300);
}

TEST_F(TorchMergeTest, MisalignedPairWithoutIdsWarnsAndLinksNothingByTime) {
  std::vector<Event> events = RunEvents();
  events.erase(events.begin(), events.begin() + 3);  // no ids left
  if (!WriteRun(kBase, kBase + 100000000000, events)) GTEST_SKIP() << why_;
  Trace trace;
  ASSERT_TRUE(ImportTrace(dir_.string(), &trace).ok());
  EXPECT_TRUE(HasWarning(trace, "do not overlap once aligned")) << trace.metadata().warnings.size();
  EXPECT_TRUE(HasWarning(trace, "link to no framework op"));
  const KeyAverages avg = KeyAverages::FromTrace(trace);
  ASSERT_NE(Row(avg, "aten::add"), nullptr);
  EXPECT_EQ(Row(avg, "aten::add")->self_device_time_total_ns, 0);
  EXPECT_EQ(avg.unmatched_device_activity(), 1u);
}

TEST_F(TorchMergeTest, DeviceProfileExecutionsLinkToTheTorchRuntimeCallBeforeThem) {
  // A device profile alone (no runtime calls): its device clock starts at 1 ms, at kBase.
  const std::string spec = R"({"tables":{
 "Metadata":{"columns":{"first_hw_timestamp":[1000000],"first_ts":["2023-11-14 22:13:20 UTC"],
   "neuroncore_idx":[0]}},
 "ExecutionInfo":{"columns":{"execution_index":[0,1],"execution_start_ts":[100000,700000],
   "execution_end_ts":[400000,1103300]}},
 "Instruction":{"columns":{"start_ts":[1100100,1700100],"end_ts":[1100200,1700300],
   "engine":["TensorMatrix","Vector"],"opcode":["MATMUL","TENSOR_TENSOR"]}}
}})";
  WriteTextFile(dir_ / "trace.json", TorchTrace(kBase));
  if (!WriteNeuronProfileFromSpec(spec, dir_ / "neuron", &why_)) GTEST_SKIP() << why_;
  Trace trace;
  ASSERT_TRUE(ImportTrace(dir_.string(), &trace).ok());
  for (const std::string& w : trace.metadata().warnings) ADD_FAILURE() << "warning: " << w;
  const KeyAverages avg = KeyAverages::FromTrace(trace);
  ASSERT_NE(Row(avg, "aten::mul"), nullptr);
  ASSERT_NE(Row(avg, "aten::add"), nullptr);
  // aten::mul's execution through the torch trace's runtime call (its correlation); aten::add's,
  // whose launch the torch trace did not record, through the op holding its start.
  EXPECT_EQ(Row(avg, "aten::mul")->self_device_time_total_ns, 300000);
  EXPECT_EQ(Row(avg, "aten::add")->self_device_time_total_ns, 403300);
  // The torch runtime call stays (the profile has none) and the instructions take their op's id.
  EXPECT_EQ(Row(avg, "nrta_execute_schedule")->count, 1);
  std::map<std::string, int64_t> op_ids;
  for (const Slice& s : trace.slices()) {
    if (s.kind == ActivityKind::kCpuOp) op_ids[std::string(trace.Str(s.name))] = s.external_id;
  }
  int instructions = 0;
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kInstruction) continue;
    ++instructions;
    EXPECT_EQ(s.external_id, op_ids[trace.Str(s.name) == "MATMUL" ? "aten::mul" : "aten::add"]);
  }
  EXPECT_EQ(instructions, 2);
}

TEST_F(TorchMergeTest, AFolderOfRunsIsAJobOfMergedRanks) {
  // Neuron's layout: one folder per process, each holding its torch trace beside its profile.
  const fs::path runs[] = {dir_ / "i-0abc_pid_100", dir_ / "i-0abc_pid_101"};
  for (const fs::path& run : runs) {
    WriteTextFile(run / "trace.json", TorchTrace(kBase));
    if (!WriteNeuronProfileFromSpec(SystemProfileSpec(kBase, RunEvents()), run / "neuron", &why_)) {
      GTEST_SKIP() << why_;
    }
    fs::remove((run / "neuron").string() + ".spec.json");
  }
  std::vector<std::string> found;
  ASSERT_TRUE(FindTraces(dir_.string(), &found).ok());
  ASSERT_EQ(found.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(found[i], runs[i].string());
    EXPECT_EQ(DetectTraceFormat(found[i]), TraceFormat::kTorchNeuron);
  }
}

TEST_F(TorchMergeTest, ExistingFolderAndJobDetectionUnchanged) {
  if (!WriteNeuronProfileFromSpec(SystemProfileSpec(kBase, RunEvents()), dir_ / "neuron", &why_)) {
    GTEST_SKIP() << why_;
  }
  // A profile folder alone is still a Neuron Explorer profile.
  EXPECT_EQ(DetectTraceFormat((dir_ / "neuron").string()), TraceFormat::kNeuronExplorer);
  // Two torch traces beside a profile: no single run, so the folder is a job of its profiles.
  WriteTextFile(dir_ / "rank0.pt.trace.json", TorchTrace(kBase));
  WriteTextFile(dir_ / "rank1.pt.trace.json", TorchTrace(kBase));
  EXPECT_EQ(DetectTraceFormat(dir_.string()), TraceFormat::kUnknown);
  std::vector<std::string> found;
  ASSERT_TRUE(FindTraces(dir_.string(), &found).ok());
  EXPECT_EQ(found.size(), 3u);
  // One torch trace inside the profile folder itself: the two merged.
  WriteTextFile(dir_ / "neuron" / "trace.json", TorchTrace(kBase));
  EXPECT_EQ(DetectTraceFormat((dir_ / "neuron").string()), TraceFormat::kTorchNeuron);
}

}  // namespace
}  // namespace opscope
