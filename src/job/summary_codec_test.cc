// Rank summaries survive the binary encoding MPI processes send, and malformed input is refused.
#include <gtest/gtest.h>

#include "opscope/job.h"

namespace opscope {
namespace {

RankSummary Sample(int rank) {
  RankSummary s;
  s.file = "/runs/job/rank" + std::to_string(rank) + ".json.gz";
  s.file_bytes = 123456789;
  s.rank = rank;
  s.world_size = 8;
  s.rank_from_distributed_info = true;
  s.device_type = "CUDA";
  s.slices = 1000;
  s.timeline.start_ns = 10;
  s.timeline.exposed_memcpy_ns = -3;  // any int64 survives
  s.timeline.activities = 77;
  s.overlap_comm_ns = 5000;
  s.overlap_ns = 1200;
  for (int i = 0; i < 3; ++i) {
    CollectiveRecord c;
    c.group = "0";
    c.seq = i;
    c.name = "allreduce";
    c.kernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    c.dtype = "Float";
    c.in_nelems = c.out_nelems = 1 << 20;
    c.group_size = 8;
    c.stream = 40;
    c.start_ns = 1'700'000'000'000'000'000 + i * 1'000'000;
    c.end_ns = c.start_ns + 4000;
    c.compute_before_ns = 900 + i;
    c.slice = 4000 + i;
    s.collectives.push_back(c);
  }
  s.steps.push_back({7, 1'700'000'000'000'000'000, 1'700'000'000'100'000'000});
  s.ops.push_back({"aten::mm", 4000, 3});
  return s;
}

void ExpectSame(const RankSummary& a, const RankSummary& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.part, b.part);
  EXPECT_EQ(a.file_bytes, b.file_bytes);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.rank_from_distributed_info, b.rank_from_distributed_info);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_offset, b.error_offset);
  EXPECT_EQ(a.device_type, b.device_type);
  EXPECT_EQ(a.timeline.ToJson(), b.timeline.ToJson());
  EXPECT_EQ(a.overlap_comm_ns, b.overlap_comm_ns);
  EXPECT_EQ(a.overlap_ns, b.overlap_ns);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const CollectiveRecord &x = a.collectives[i], &y = b.collectives[i];
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kernel, y.kernel);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.in_nelems, y.in_nelems);
    EXPECT_EQ(x.group_size, y.group_size);
    EXPECT_EQ(x.start_ns, y.start_ns);
    EXPECT_EQ(x.end_ns, y.end_ns);
    EXPECT_EQ(x.compute_before_ns, y.compute_before_ns);
    EXPECT_EQ(x.slice, y.slice);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  EXPECT_EQ(a.steps[0].end_ns, b.steps[0].end_ns);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  EXPECT_EQ(a.ops[0].name, b.ops[0].name);
}

TEST(SummaryCodec, RoundTrip) {
  std::vector<RankSummary> in = {Sample(0), Sample(5)};
  in[1].error = "byte 99 (event 3): expected ','";
  in[1].error_offset = 99;
  in[1].part = "i-0abc";
  const std::string bytes = SerializeRankSummaries(in);
  std::vector<RankSummary> out;
  const Status st = ParseRankSummaries(bytes, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.size(), 2u);
  ExpectSame(in[0], out[0]);
  ExpectSame(in[1], out[1]);
  // Strings repeated per collective are stored once: a collective costs tens of bytes.
  EXPECT_LT(bytes.size(), 600u);
}

TEST(SummaryCodec, AnalysisIsTheSameAfterARoundTrip) {
  std::vector<RankSummary> in = {Sample(0), Sample(1)};
  in[1].collectives[1].start_ns += 5000;
  std::vector<RankSummary> out;
  const Status st = ParseRankSummaries(SerializeRankSummaries(in), &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(JobReportJson(AnalyzeJob(in)), JobReportJson(AnalyzeJob(out)));
}

TEST(SummaryCodec, RefusesMalformedInput) {
  const std::string bytes = SerializeRankSummaries({Sample(0)});
  std::vector<RankSummary> out;
  const Status garbage = ParseRankSummaries("garbage", &out);
  EXPECT_EQ(garbage.code(), Status::Code::kInvalidInput);
  EXPECT_NE(garbage.message().find("bad header"), std::string::npos);
  for (size_t cut : {size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    out.clear();
    const Status st = ParseRankSummaries(std::string_view(bytes).substr(0, cut), &out);
    EXPECT_EQ(st.code(), Status::Code::kInvalidInput) << cut;
    EXPECT_LE(st.offset(), cut) << cut;
  }
  const Status extra = ParseRankSummaries(bytes + "x", &out);
  EXPECT_EQ(extra.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(extra.message(), "1 bytes left after the last rank summary");
  EXPECT_EQ(extra.offset(), bytes.size());
}

// A stream from another opscope build: the header's version is checked before any field, and the
// message names both versions. Version 1 is refused: its tag was used for two layouts.
TEST(SummaryCodec, RefusesOtherFormatVersions) {
  const std::string bytes = SerializeRankSummaries({Sample(0)});
  ASSERT_EQ(bytes.substr(0, 6), "OPSRS3");
  EXPECT_EQ(RankSummaryFormatVersion(), 3);
  for (const char version : {'2', '4'}) {
    std::string other = bytes;
    other[5] = version;
    std::vector<RankSummary> out;
    const Status st = ParseRankSummaries(other, &out);
    const std::string& error = st.message();
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(out.empty());
    EXPECT_NE(error.find(std::string("format version ") + version), std::string::npos) << error;
    EXPECT_NE(error.find("reads version 3"), std::string::npos) << error;
    EXPECT_NE(error.find(version == '2' ? "older" : "newer"), std::string::npos) << error;
  }
  // A version-1 stream as the old encoder wrote it (no slice per collective) is refused too.
  std::vector<RankSummary> out;
  const Status st = ParseRankSummaries(std::string("OPSRS1") + '\0', &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("format version 1"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace opscope
