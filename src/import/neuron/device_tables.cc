// A device profile's clock and hardware (Metadata) and its executions (ExecutionInfo); the two
// large timeline tables are read in big_tables.cc.
#include <fmt/format.h>

#include <algorithm>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/neuron/explorer_profile.h"

namespace opscope::import::neuron {
namespace {

// A device timestamp this large is already epoch nanoseconds (after 1973).
constexpr int64_t kEpochNsFloor = int64_t{100000000} * 1000000000;

}  // namespace

Status ExplorerProfile::ReadDeviceMetadata(ProfileDir* dir) {
  std::unique_ptr<ProfileTable> t;
  const std::vector<FieldRequest> fields = {
      {"profile_schema_version", FieldType::kString, true},
      {"first_hw_timestamp", FieldType::kInt},
      {"first_ts", FieldType::kString},
      {"dma_ddr_bandwidth", FieldType::kFloat},
      {"hbm_ddr_bandwidth", FieldType::kFloat},
      {"num_physical_cores", FieldType::kInt},
      {"num_dma_engines_per_neuroncore", FieldType::kInt},
      {"neuroncore_idx", FieldType::kInt},
      {"instance_type", FieldType::kString},
      {"runtime_version", FieldType::kString},
      {"explorer_version", FieldType::kString},
      {"is_simulation", FieldType::kBool},
  };
  if (Status st = OpenTable(*dir, "Metadata", fields, &t); !st.ok() || !t) return st;
  bool seen = false;
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    if (rg.rows == 0 || seen) return Status::Ok();
    seen = true;
    dir->version = std::string(rg.field(0).Str(0));
    const int64_t first_hw = rg.field(1).Int(0);
    int64_t epoch = 0;
    if (first_hw >= kEpochNsFloor) {
      dir->clock_offset = 0;
    } else if (ParseTimestamp(rg.field(2).Str(0), &epoch)) {
      dir->clock_offset = epoch - first_hw;
    } else if (first_hw != 0 || !rg.field(2).IsNull(0)) {
      Warn(
          fmt::format("{}: Metadata.first_ts '{}' is not a time opscope reads; the device's "
                      "times stay on its own clock",
                      dir->path, rg.field(2).Str(0)));
    }
    builder_->SetBaseTime(internal::SatAdd(first_hw, dir->clock_offset));
    dir->nc = rg.field(7).Int(0, 0);
    JsonWriter w;
    w.BeginObject();
    w.Field("profile_schema_version", dir->version);
    for (size_t i : {3u, 4u}) {
      if (!rg.field(i).IsNull(0)) {
        w.Key(fields[i].name);
        w.Double(rg.field(i).Float(0));
      }
    }
    for (size_t i : {5u, 6u}) {
      if (!rg.field(i).IsNull(0)) w.Field(fields[i].name, rg.field(i).Int(0));
    }
    for (size_t i : {8u, 9u, 10u}) {
      if (!rg.field(i).IsNull(0)) w.Field(fields[i].name, rg.field(i).Str(0));
    }
    if (!rg.field(11).IsNull(0)) {
      w.Key("is_simulation");
      w.Bool(rg.field(11).Bool(0));
    }
    w.EndObject();
    builder_->SetInfo("metadata", w.Take());
    return Status::Ok();
  };
  ++stats_->metadata;
  return t->Read(read);
}

Status ExplorerProfile::ReadExecutions(const ProfileDir& dir) {
  if (builder_->HasExecutions(dir.device)) return Status::Ok();  // the system profile's
  std::unique_ptr<ProfileTable> t;
  const std::vector<FieldRequest> fields = {{"execution_index", FieldType::kInt, true},
                                            {"neff_name", FieldType::kString},
                                            {"execution_start_ts", FieldType::kInt},
                                            {"execution_end_ts", FieldType::kInt}};
  if (Status st = OpenTable(dir, "ExecutionInfo", fields, &t); !st.ok() || !t) return st;
  TableRead read;
  read.fields = fields;
  Trace* trace = builder_->trace();
  const StringId name = trace->Intern("nc_exec_running");
  const StringId kernel = trace->Intern(KinetoCategory(ActivityKind::kKernel));
  // ExecutionInfo's times are "relative to the start of the profile": device times past the
  // profile's first timestamp; a time already past it is taken as a device time.
  const int64_t profile_start = builder_->base_time() - dir.clock_offset;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      ++stats_->events;
      if (rg.field(2).IsNull(r) || rg.field(3).IsNull(r)) continue;  // pre-v6 NTFF: no timeline
      int64_t start = rg.field(2).Int(r), end = rg.field(3).Int(r);
      if (start < profile_start) {
        start = internal::SatAdd(start, profile_start);
        end = internal::SatAdd(end, profile_start);
      }
      Execution e{builder_->ToTrace(internal::SatAdd(start, dir.clock_offset)), 0,
                  builder_->NewExternalId(), 0};
      e.end = e.start + std::max<int64_t>(end - start, 0);
      Slice s;
      s.ts_ns = e.start;
      s.dur_ns = e.end - e.start;
      s.name = name;
      s.category = kernel;
      s.kind = ActivityKind::kKernel;
      s.track = builder_->ExecutionTrack(dir.device);
      s.external_id = e.external_id;
      JsonWriter w;
      w.BeginObject();
      w.Field("execution_index", rg.field(0).Int(r));
      if (!rg.field(1).IsNull(r)) w.Field("program", rg.field(1).Str(r));
      w.EndObject();
      s.args = trace->AddArgs(w.Take());
      trace->AddSlice(s);
      builder_->AddExecution(dir.device, e);
    }
    return Status::Ok();
  };
  return t->Read(read);
}

}  // namespace opscope::import::neuron
