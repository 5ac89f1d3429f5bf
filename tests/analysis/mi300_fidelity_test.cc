// key_averages(group_by_input_shape=True), the memory columns, FLOPs and the memory timeline on
// the two TraceLens MI300 traces (record_shapes, profile_memory and with_flops all on), against
// figures computed independently from the raw JSON by a short Python script applying PyTorch's
// rules (json with Decimal timestamps, ns = us * 1000):
//   - shape rows: cpu_op events grouped by (name, json.dumps(args["Input Dims"])); count and
//     sum of dur;
//   - FLOPs: addmm 2 * mat1[0] * mat1[1] * mat2[1] (inputs 1 and 2), mm the same on inputs 0, 1;
//   - memory: for every cpu_op / user_annotation / cuda_runtime event, the sum of "Bytes" of the
//     [memory] events with ts in [ts, ts + dur] (bisect_left / bisect_right over sorted ts), on
//     any thread, Device Type 1/6/20 as device memory; summed per name;
//   - peaks: max "Total Allocated" / "Total Reserved" per (Device Type, Device Id), and the first
//     ts with the max allocated.
#include <gtest/gtest.h>

#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

Trace Load(const char* file) {
  Trace t;
  const fs::path path = testing::FixturesDir() / "traces" / "tracelens" / "mi300" / file;
  EXPECT_TRUE(ImportTrace(path.string(), &t).ok()) << testing::FixturesProblem() << " " << path;
  return t;
}

const KeyAverage* Find(const KeyAverages& avg, const std::string& key,
                       const std::string& shapes = "") {
  for (const KeyAverage& r : avg.rows()) {
    if (r.key == key && (shapes.empty() || r.input_shapes == shapes)) return &r;
  }
  return nullptr;
}

struct ShapeRow {
  const char* name;
  const char* shapes;
  int64_t count, cpu_time_total_ns, flops;
};
struct MemoryRow {
  const char* name;
  int64_t device_memory_usage;
};

void CheckTrace(const Trace& t, std::initializer_list<ShapeRow> shape_rows,
                std::initializer_list<MemoryRow> memory_rows) {
  const KeyAverages by_shape = KeyAverages::FromTrace(t, {.group_by_input_shape = true});
  EXPECT_TRUE(by_shape.has_flops());
  for (const ShapeRow& w : shape_rows) {
    const KeyAverage* r = Find(by_shape, w.name, w.shapes);
    ASSERT_NE(r, nullptr) << w.name << " " << w.shapes;
    EXPECT_EQ(r->count, w.count) << w.name << " " << w.shapes;
    EXPECT_EQ(r->cpu_time_total_ns, w.cpu_time_total_ns) << w.name << " " << w.shapes;
    EXPECT_EQ(r->flops, w.flops) << w.name << " " << w.shapes;
  }
  const KeyAverages avg = KeyAverages::FromTrace(t);
  EXPECT_TRUE(avg.has_memory());
  EXPECT_EQ(Find(avg, "[memory]"), nullptr);  // every event falls inside some host op
  for (const MemoryRow& w : memory_rows) {
    const KeyAverage* r = Find(avg, w.name);
    ASSERT_NE(r, nullptr) << w.name;
    EXPECT_EQ(r->device_memory_usage, w.device_memory_usage) << w.name;
  }
}

TEST(Mi300FidelityTest, Falconsai) {
  const Trace t = Load("Falconsai_nsfw_image_detection__1016002.json.gz");
  CheckTrace(t,
             {{"aten::addmm", "[[768], [788, 768], [768, 768], [], []]", 48, 1373051, 44619005952},
              {"aten::addmm", "[[768], [4, 768], [768, 768], [], []]", 1, 35782, 4718592},
              {"aten::linear", "[[4, 197, 768], [768, 768], [768]]", 48, 1788025, 0}},
             {{"aten::empty", 5851288576}, {"aten::gelu", 58097664}, {"aten::add", 36026368}});
  const MemoryTimeline mt = ComputeMemoryTimeline(t);
  ASSERT_EQ(mt.devices.size(), 1u);
  EXPECT_EQ(mt.devices[0].device, "HIP:0");
  EXPECT_EQ(mt.devices[0].samples.size(), 620u);
  EXPECT_EQ(mt.devices[0].peak_allocated, 272628736);
  EXPECT_EQ(mt.devices[0].peak_reserved, 291504128);
  EXPECT_EQ(mt.devices[0].peak_ts_ns, 2199280225052148);
}

TEST(Mi300FidelityTest, Qwen) {
  const Trace t = Load("Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  CheckTrace(
      t,
      {{"aten::addmm", "[[1024], [8944, 1024], [1024, 1024], [], []]", 72, 2597598, 1350498779136},
       {"aten::mm", "[[8944, 1024], [1024, 2816]]", 48, 1679238, 2475914428416},
       {"aten::mm", "[[8944, 2816], [2816, 1024]]", 24, 732291, 1237957214208},
       {"aten::linear", "[[16, 559, 1024], [2816, 1024], []]", 48, 2286294, 0}},
      {{"aten::empty", 15240146944}, {"aten::to", 2692790784}, {"aten::add", 1760218112}});
  const MemoryTimeline mt = ComputeMemoryTimeline(t);
  ASSERT_EQ(mt.devices.size(), 2u);
  EXPECT_EQ(mt.devices[0].device, "CPU");
  EXPECT_EQ(mt.devices[0].samples.size(), 104u);
  EXPECT_EQ(mt.devices[0].peak_allocated, 8);
  EXPECT_EQ(mt.devices[1].device, "HIP:0");
  EXPECT_EQ(mt.devices[1].samples.size(), 2588u);
  EXPECT_EQ(mt.devices[1].peak_allocated, 2219047936);
  EXPECT_EQ(mt.devices[1].peak_reserved, 2533359616);
  EXPECT_EQ(mt.devices[1].peak_ts_ns, 2241346169711412);
}

}  // namespace
}  // namespace opscope
