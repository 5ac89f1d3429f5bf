// A Neuron system profile of several hosts opened as a job (ListTraceParts, FindRankFiles): one
// rank per instance, each rank's trace holding that host's events only, collectives matched
// across ranks from CcOp rows (Parquet, written by parquet-wasm from a spec written here) and from
// cc_running events (legacy system_profile.json written here), and the job figures checked against
// values worked out by hand from the rows. `opscope report PATH --json` is run as a user runs it.
// The Parquet half needs node (skipped with a message without it).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "opscope/import.h"
#include "opscope/job.h"
#include "opscope/trace.h"
#include "tests/analysis/test_support.h"
#include "tests/import/neuron/profile_writer.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBase = 1700000000000000000;  // the run's epoch ns

using testing::WriteTextFile;

// Two hosts, one process and one NeuronCore each, two all-reduces of 1 Mi fp32 elements (4 MiB).
// Per host: its collectives' [start, end) past kBase, in ns.
struct Host {
  std::string instance;
  int64_t pid;
  std::vector<std::pair<int64_t, int64_t>> collectives;
};
// i-0aaa arrives first at both; i-0bbb is 50 us late at the first and 20 us at the second. Both
// end together, so the clock fit finds no offset.
const std::vector<Host> kHosts = {
    {"i-0aaa", 100, {{1000000, 1200000}, {3000000, 3100000}}},
    {"i-0bbb", 200, {{1050000, 1200000}, {3020000, 3100000}}},
};
// By hand from the rows above (job.h's definitions): skew = last start - first start, transfer =
// earliest end - last start, algbw = bytes / transfer, busbw = algbw x 2(n-1)/n = algbw (n = 2).
constexpr int64_t kBytes = 1048576 * 4;
constexpr int64_t kSkew[] = {50000, 20000};
constexpr int64_t kTransfer[] = {150000, 80000};

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// The system profile: per host a runtime call and the execution it launched, the list of device
// profiles (one folder per host).
std::string SystemSpec() {
  std::vector<std::string> ids, names, starts, ends, durs, sources, instances, pids, tids, ncs;
  std::vector<std::string> folders, list_instances, list_pids;
  int id = 0;
  for (const Host& h : kHosts) {
    const auto add = [&](const char* name, const char* source, int64_t s, int64_t e) {
      ids.push_back(std::to_string(++id));
      names.push_back(fmt::format("\"{}\"", name));
      starts.push_back(std::to_string(s));  // past first_ts_ns, as the reader allows
      ends.push_back(std::to_string(e));
      durs.push_back(std::to_string(e - s));
      sources.push_back(fmt::format("\"{}\"", source));
      instances.push_back(fmt::format("\"{}\"", h.instance));
      pids.push_back(std::to_string(h.pid));
      tids.push_back(std::to_string(h.pid + 1));
      ncs.push_back("0");
    };
    add("nrt_execute", "neuron_rt", 500000, 3300000);
    add("nc_exec_running", "neuron_hw", 900000, 3200000);
    folders.push_back(fmt::format("\"dev_{}\"", h.instance));
    list_instances.push_back(fmt::format("\"{}\"", h.instance));
    list_pids.push_back(std::to_string(h.pid));
  }
  return fmt::format(
      R"({{"tables":{{
 "SystemProfileMetadata":{{"columns":{{"first_ts_ns":["{}"]}}}},
 "SystemProfileEvents":{{"columns":{{"id":[{}],"name":[{}],"start_ts":[{}],"end_ts":[{}],
  "duration_ns":[{}],"trace_event_source":[{}],"instance_id":[{}],"process_id":[{}],
  "thread_id":[{}],"nc_idx":[{}]}}}},
 "DeviceProfileList":{{"columns":{{"device_profile_name":[{}],"instance_id":[{}],
  "process_id":[{}],"nc_id":[0,0]}}}}
}}}})",
      kBase, Join(ids), Join(names), Join(starts), Join(ends), Join(durs), Join(sources),
      Join(instances), Join(pids), Join(tids), Join(ncs), Join(folders), Join(list_instances),
      Join(list_pids));
}

// One host's device profile: an instruction and its CcOp rows, on a device clock that reads 0 at
// kBase (Metadata.first_ts names the epoch time of first_hw_timestamp). Times stay below 2^53: the
// writer's JSON numbers are JavaScript doubles.
std::string DeviceSpec(const Host& h) {
  std::vector<std::string> starts, ends, durs;
  for (const auto& [s, e] : h.collectives) {
    starts.push_back(std::to_string(s));
    ends.push_back(std::to_string(e));
    durs.push_back(std::to_string(e - s));
  }
  const auto repeat = [&](const std::string& v) {
    return Join(std::vector<std::string>(h.collectives.size(), v));
  };
  return fmt::format(
      R"({{"tables":{{
 "Metadata":{{"columns":{{"first_hw_timestamp":[900000],"first_ts":["2023-11-14 22:13:20.0009 UTC"],
  "num_physical_cores":[1],"neuroncore_idx":[0]}}}},
 "Instruction":{{"columns":{{"start_ts":[{}],"end_ts":[{}],"engine":["TensorMatrix"],
  "opcode":["MATMUL"]}}}},
 "CcOp":{{"columns":{{"start_ts":[{}],"end_ts":[{}],"duration_ns":[{}],"operation":[{}],
  "algorithm":[{}],"num_elements":[{}],"dtype":[{}],"op_id":[{}],"stream_id":[{}],
  "stream_index":[{}],"trigger_engine":[{}],"replica_group":[{}]}}}}
}}}})",
      910000, 960000, Join(starts), Join(ends), Join(durs), repeat("\"all_reduce\""),
      repeat("\"ring\""), repeat("1048576"), repeat("\"fp32\""), repeat("1"), repeat("0"),
      repeat("0"), repeat("\"Sync\""), repeat("\"[[0, 1]]\""));
}

// The legacy system_profile.json of the same two hosts: per host a runtime call, its execution
// and the two collectives as cc_running events, and a host memory sample.
std::string LegacySystemJson() {
  std::vector<std::string> events, mem;
  int id = 0;
  for (const Host& h : kHosts) {
    const auto event = [&](const std::string& name, int64_t s, int64_t e, int64_t parent) {
      events.push_back(fmt::format(
          R"({{"duration": {}, "group": "nrt-nc-000", "id": {}, "parent_id": {},
  "instance_id": "{}", "lnc_idx": "0", "name": "{}", "process_id": "{}", "thread_id": {},
  "timestamp": {}, "type": 3}})",
          e - s, ++id, parent, h.instance, name, h.pid, h.pid + 1, kBase + s));
      return id;
    };
    const int call = event("nrt_execute", 500000, 3300000, 0);
    event("nc_exec_running", 900000, 3200000, call);
    for (const auto& [s, e] : h.collectives) event("cc_running", s, e, 0);
    mem.push_back(fmt::format(
        R"({{"duration": 1, "instance_id": "{}", "percent_usage": 9.5, "timestamp": {},
  "usage": 1000}})",
        h.instance, kBase + 400000));
  }
  return "{\"trace_events\": [" + Join(events) + "],\n\"mem_usage\": [" + Join(mem) +
         "],\n\"cpu_util\": []}";
}

class NeuronJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("opscope_neuron_job_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The Parquet system profile in dir_/profile; false (and why_) when the writer cannot run.
  bool WriteParquetProfile() {
    const fs::path root = dir_ / "profile";
    WriteTextFile(dir_ / "system.spec.json", SystemSpec());
    if (!testing::WriteNeuronProfile(dir_ / "system.spec.json", root, &why_)) return false;
    for (const Host& h : kHosts) {
      const fs::path spec = dir_ / (h.instance + ".spec.json");
      WriteTextFile(spec, DeviceSpec(h));
      if (!testing::WriteNeuronProfile(spec, root / ("dev_" + h.instance), &why_)) return false;
    }
    return true;
  }

  fs::path dir_;
  std::string why_;
};

// The processes a trace holds, by name.
std::set<std::string> Processes(const Trace& t) {
  std::set<std::string> out;
  for (const auto& p : t.processes()) out.insert(std::string(t.Str(p.name)));
  return out;
}

// The job's figures, as AnalyzeJob gives them, against the hand-worked values.
void ExpectJobFigures(const JobReport& job, const std::string& path) {
  ASSERT_TRUE(job.error.empty()) << job.error;
  EXPECT_TRUE(job.errors.empty());
  ASSERT_EQ(job.ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(job.ranks[r].rank, static_cast<int>(r));
    EXPECT_EQ(job.ranks[r].file, path);
    EXPECT_EQ(job.ranks[r].part, kHosts[r].instance);
  }
  EXPECT_EQ(job.world_size, 2);
  EXPECT_TRUE(job.clocks_aligned);
  EXPECT_NEAR(job.ranks[1].clock_offset_ns, 0, 1);
  ASSERT_EQ(job.collectives.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const CollectiveInstance& c = job.collectives[i];
    EXPECT_EQ(c.seq, static_cast<int64_t>(i));
    EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(c.skew_ns, kSkew[i]);
    EXPECT_EQ(c.transfer_ns, kTransfer[i]);
    EXPECT_EQ(c.wait_ns, (std::vector<int64_t>{kSkew[i], 0}));
    EXPECT_EQ(c.last_rank, 1);
  }
  ASSERT_FALSE(job.stragglers.empty());
  EXPECT_EQ(job.stragglers[0].rank, 1);
  EXPECT_EQ(job.stragglers[0].times_last, 2);
  EXPECT_EQ(job.stragglers[0].wait_caused_ns, kSkew[0] + kSkew[1]);
}

TEST_F(NeuronJobTest, ParquetSystemProfileOfTwoHostsIsAJob) {
  if (!WriteParquetProfile()) GTEST_SKIP() << why_;
  const std::string path = (dir_ / "profile").string();
  std::vector<std::string> parts;
  ASSERT_TRUE(ListTraceParts(path, &parts).ok());
  EXPECT_EQ(parts, (std::vector<std::string>{"i-0aaa", "i-0bbb"}));
  // Each part holds its host's events only.
  for (const Host& h : kHosts) {
    Trace t;
    ImportOptions options;
    options.part = h.instance;
    const Status st = ImportTrace(path, &t, nullptr, options);
    ASSERT_TRUE(st.ok()) << st.message();
    const std::set<std::string> processes = Processes(t);
    EXPECT_TRUE(processes.count(fmt::format("{}/PID:{}", h.instance, h.pid))) << h.instance;
    for (const Host& other : kHosts) {
      if (other.instance == h.instance) continue;
      EXPECT_FALSE(processes.count(fmt::format("{}/PID:{}", other.instance, other.pid)));
    }
    int collectives = 0;
    for (const Slice& s : t.slices()) collectives += t.Str(s.name) == "nccom_all_reduce_ring";
    EXPECT_EQ(collectives, 2) << h.instance;
  }
  std::vector<RankFile> files;
  ASSERT_TRUE(FindRankFiles({path}, &files).ok());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].part, "i-0bbb");
  EXPECT_EQ(files[1].name_rank, 1);
  const JobReport job = AnalyzeJob(LoadRankSummaries(files, 1));
  ExpectJobFigures(job, path);
  ASSERT_EQ(job.collectives.size(), 2u);
  EXPECT_EQ(job.collectives[0].bytes, kBytes);
  EXPECT_EQ(job.collectives[0].group_size, 2);
  EXPECT_NEAR(job.collectives[0].algbw_gbps, static_cast<double>(kBytes) / kTransfer[0], 1e-9);
  EXPECT_NEAR(job.collectives[0].busbw_gbps, static_cast<double>(kBytes) / kTransfer[0], 1e-9);

  // As a user runs it: the multi-rank report.
  const testing::CommandResult cli = testing::RunOpscope("report '" + path + "' --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(cli.output).get(doc), simdjson::SUCCESS) << cli.output;
  simdjson::dom::array ranks;
  ASSERT_EQ(doc["ranks"].get(ranks), simdjson::SUCCESS) << cli.output;
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(std::string(ranks.at(1)["part"].get_string().value()), "i-0bbb");
  simdjson::dom::array collectives;
  ASSERT_EQ(doc["collectives"].get(collectives), simdjson::SUCCESS);
  EXPECT_EQ(collectives.size(), 2u);
  const testing::CommandResult text = testing::RunOpscope("report '" + path + "'");
  EXPECT_NE(text.output.find(path + "#i-0bbb"), std::string::npos) << text.output;
  // The Explorer opens it as a job: each host's trace, the job page over them.
  const testing::CommandResult explore =
      testing::RunOpscope("explore '" + path + "' --port 0 --exit-after 1");
  ASSERT_EQ(explore.exit_code, 0) << explore.output;
  EXPECT_NE(explore.output.find("opened a job: 2 ranks of 2, 2 collectives matched"),
            std::string::npos)
      << explore.output;
  EXPECT_NE(explore.output.find("serving 2 traces"), std::string::npos) << explore.output;
}

TEST_F(NeuronJobTest, LegacySystemProfileOfTwoHostsIsAJob) {
  const fs::path file = dir_ / "json" / "system_profile.json";
  WriteTextFile(file, LegacySystemJson());
  std::vector<std::string> parts;
  ASSERT_TRUE(ListTraceParts(file.string(), &parts).ok());
  EXPECT_EQ(parts, (std::vector<std::string>{"i-0aaa", "i-0bbb"}));
  ASSERT_TRUE(ListTraceParts(file.parent_path().string(), &parts).ok());
  EXPECT_EQ(parts.size(), 2u);
  // Host memory samples go with their host.
  Trace t;
  ImportOptions options;
  options.part = "i-0bbb";
  ASSERT_TRUE(ImportTrace(file.string(), &t, nullptr, options).ok());
  const std::set<std::string> processes = Processes(t);
  EXPECT_TRUE(processes.count("i-0bbb/PID:200"));
  EXPECT_FALSE(processes.count("i-0aaa/PID:100"));
  EXPECT_FALSE(processes.count("i-0aaa"));

  for (const std::string& path : {file.string(), file.parent_path().string()}) {
    std::vector<RankFile> files;
    ASSERT_TRUE(FindRankFiles({path}, &files).ok());
    ASSERT_EQ(files.size(), 2u) << path;
    const JobReport job = AnalyzeJob(LoadRankSummaries(files, 1));
    ExpectJobFigures(job, path);
  }
  // A file named on its own is a job too.
  const testing::CommandResult cli = testing::RunOpscope("report '" + file.string() + "' --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find("\"part\":\"i-0aaa\""), std::string::npos) << cli.output;
  // Two such profiles diff as two jobs, rank by rank.
  const testing::CommandResult diff =
      testing::RunOpscope("diff '" + file.string() + "' '" + file.string() + "' --json");
  ASSERT_EQ(diff.exit_code, 0) << diff.output;
  EXPECT_NE(diff.output.find("\"collective_summary\""), std::string::npos) << diff.output;
  const testing::CommandResult explore =
      testing::RunOpscope("explore '" + file.string() + "' --port 0 --exit-after 1");
  ASSERT_EQ(explore.exit_code, 0) << explore.output;
  EXPECT_NE(explore.output.find("opened a job: 2 ranks of 2, 2 collectives matched"),
            std::string::npos)
      << explore.output;
}

// One host is one trace, as before; a profile that cannot be listed stays one rank file, whose
// import then gives its error.
TEST_F(NeuronJobTest, OneHostOrABrokenProfileIsNoJob) {
  std::string one = LegacySystemJson();
  for (size_t at; (at = one.find("i-0bbb")) != std::string::npos;) one.replace(at, 6, "i-0aaa");
  const fs::path file = dir_ / "one" / "system_profile.json";
  WriteTextFile(file, one);
  std::vector<std::string> parts;
  ASSERT_TRUE(ListTraceParts(file.string(), &parts).ok());
  EXPECT_TRUE(parts.empty());
  std::vector<RankFile> files;
  ASSERT_TRUE(FindRankFiles({file.string()}, &files).ok());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].part, "");

  const fs::path broken = dir_ / "broken" / "system_profile.json";
  WriteTextFile(broken, LegacySystemJson().substr(0, 300));
  EXPECT_FALSE(ListTraceParts(broken.string(), &parts).ok());
  ASSERT_TRUE(FindRankFiles({broken.string()}, &files).ok());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].part, "");
  // The job's error for it is a Status: the import's own message, file and byte offset.
  Trace t;
  const Status imported = ImportTrace(broken.string(), &t);
  ASSERT_FALSE(imported.ok());
  const JobReport job = AnalyzeJob(LoadRankSummaries(files, 1));
  ASSERT_EQ(job.errors.size(), 1u);
  EXPECT_TRUE(job.partial);
  EXPECT_EQ(job.errors[0].code(), Status::Code::kInvalidInput);
  EXPECT_EQ(job.errors[0].file(), broken.string());
  EXPECT_EQ(job.errors[0].message(), imported.message());
  EXPECT_EQ(job.errors[0].offset(), imported.offset());
}

}  // namespace
}  // namespace opscope
