// The Neuron Explorer reader's entry point and its schema rule: which folders are profiles, the
// version a profile states and the fields it lists, what the reader counts as unknown, and the
// order the tables are read in (explorer_profile.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/cores.h"
#include "import/neuron/documented_schema.h"
#include "import/neuron/explorer_profile.h"
#include "import/neuron/neuron_reader.h"

namespace opscope::import::neuron {
namespace {

namespace fs = std::filesystem;

// The tables that make a folder a profile: a device profile's Metadata, a system profile's own.
bool HasProfileTables(const std::string& path) {
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "Metadata.parquet" || name == "Metadata_0.parquet" ||
        name == "SystemProfileMetadata.parquet" || name == "SystemProfileMetadata_0.parquet") {
      return true;
    }
  }
  return false;
}

bool ParseVersion(const std::string& text, int* major) {
  int parts[3] = {0, 0, 0};
  size_t k = 0, i = 0;
  for (; k < 3; ++k) {
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 6) {
      parts[k] = parts[k] * 10 + (text[i++] - '0');
      ++digits;
    }
    if (digits == 0) return false;
    if (k < 2 && (i >= text.size() || text[i++] != '.')) return false;
  }
  if (i != text.size()) return false;
  *major = parts[0];
  return true;
}

// What the reader needs of the schema: the version it was checked against and its major.
constexpr int kDocumentedMajor = 7;

std::string Join(const std::set<std::string>& names, size_t limit) {
  std::string out;
  size_t n = 0;
  for (const std::string& s : names) {
    if (n++ == limit) {
      out += fmt::format(", ... ({} more)", names.size() - limit);
      break;
    }
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

bool ParsePart(const std::string& part, PartFilter* filter) {
  *filter = PartFilter();
  if (part.empty()) return true;
  filter->any = false;
  const size_t slash = part.rfind('/');
  if (slash == std::string::npos) {  // a whole instance (a host of a job)
    filter->instance = part;
    return true;
  }
  filter->instance = part.substr(0, slash);
  const std::string pid = part.substr(slash + 1);
  if (pid.empty() || pid.size() > 18 ||
      !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  filter->pid = std::stoll(pid);
  return true;
}

std::string FlowTableKey(std::string_view table) {
  std::string key;
  for (char c : table) {
    if (c == '_') continue;
    key += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return key;
}

ExplorerProfile::ExplorerProfile(NeuronTraceBuilder* builder, ImportStats* stats,
                                 const ImportOptions& options)
    : builder_(builder), stats_(stats), options_(options) {
  threads_ = internal::DefaultThreadsNow(options.threads);
}

void ExplorerProfile::Warn(std::string message) {
  if (warnings_kept_++ >= options_.max_warning_messages) return;
  stats_->warnings.push_back(message);
  builder_->AddWarning(std::move(message));
}

Status ExplorerProfile::ListDir(const std::string& path, ProfileDir* dir) {
  dir->path = path;
  if (Status st = ListProfileTables(path, &dir->tables); !st.ok()) return st;
  std::error_code ec;
  for (const auto& [name, parts] : dir->tables) {
    for (const std::string& f : parts.files) stats_->input_bytes += fs::file_size(f, ec);
  }
  return ReadSchemaFields(dir);
}

Status ExplorerProfile::ReadSchemaFields(ProfileDir* dir) {
  if (!dir->has("SchemaFields")) return Status::Ok();
  std::unique_ptr<ProfileTable> t;
  if (Status st = ProfileTable::Open(dir->tables.at("SchemaFields"), &t); !st.ok()) return st;
  TableRead read;
  read.fields = {{"table_name", FieldType::kString, true},
                 {"field_name", FieldType::kString, true}};
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      dir->fields[std::string(rg.field(0).Str(r))].insert(std::string(rg.field(1).Str(r)));
    }
    return Status::Ok();
  };
  dir->listed = true;
  return t->Read(read);
}

// The version rule: 7.x and later are read; a version whose schema lacks a field opscope needs is
// refused by OpenTable, naming the version and the field.
Status ExplorerProfile::CheckVersion(ProfileDir* dir) {
  if (dir->version.empty()) return Status::Ok();
  if (!ParseVersion(dir->version, &dir->major)) {
    return Status::InvalidInput("table Metadata, column 'profile_schema_version': '" +
                                    dir->version + "' is not a MAJOR.MINOR.PATCH schema version",
                                0, dir->path);
  }
  if (dir->major < kDocumentedMajor) {
    return Status::InvalidInput(
        fmt::format("profile schema {} is older than 7.0.0: opscope reads Neuron Explorer "
                    "profiles of schema 7.x and later (checked against {})",
                    dir->version, kDocumentedSchemaVersion),
        0, dir->path);
  }
  if (dir->major > kDocumentedMajor) {
    Warn(
        fmt::format("{}: profile schema {} is a MAJOR version past {}, the one opscope was checked "
                    "against; read because every field opscope needs is present",
                    dir->path, dir->version, kDocumentedSchemaVersion));
  }
  return Status::Ok();
}

Status ExplorerProfile::OpenTable(const ProfileDir& dir, const std::string& name,
                                  const std::vector<FieldRequest>& fields,
                                  std::unique_ptr<ProfileTable>* out) {
  out->reset();
  auto it = dir.tables.find(name);
  if (it == dir.tables.end()) return Status::Ok();
  if (dir.listed) {
    const auto listed = dir.fields.find(name);
    for (const FieldRequest& f : fields) {
      if (!f.needed) continue;
      if (listed != dir.fields.end() && listed->second.count(std::string(f.name))) continue;
      const std::string version = dir.version.empty() ? "of this profile" : dir.version;
      const std::string change =
          dir.major > kDocumentedMajor
              ? fmt::format(" (a MAJOR change from {}, the version opscope was checked against)",
                            kDocumentedSchemaVersion)
              : "";
      return Status::InvalidInput(
          fmt::format("profile schema {}{}: table {} has no field '{}' in the profile's "
                      "SchemaFields, and opscope needs it",
                      version, change, name, f.name),
          0, dir.path);
    }
  }
  if (Status st = ProfileTable::Open(it->second, out); !st.ok()) return st;
  for (const std::string& column : (*out)->ColumnNames()) {
    if (!IsDocumented(name + "." + column)) unknown_fields_.insert(name + "." + column);
  }
  return Status::Ok();
}

void ExplorerProfile::CountUnknown(const ProfileDir& dir) {
  for (const auto& [table, parts] : dir.tables) {
    if (!IsDocumented(table)) unknown_tables_.insert(table);
  }
  for (const auto& [table, fields] : dir.fields) {
    if (!IsDocumented(table)) {
      unknown_tables_.insert(table);
      continue;
    }
    for (const std::string& f : fields) {
      if (!IsDocumented(table + "." + f)) unknown_fields_.insert(table + "." + f);
    }
  }
}

Status ExplorerProfile::ReadDeviceProfile(ProfileDir* dir) {
  builder_->SortExecutions();
  for (auto read : {&ExplorerProfile::ReadFlows, &ExplorerProfile::ReadExecutions}) {
    if (Status st = (this->*read)(*dir); !st.ok()) return st;
  }
  if (!builder_->HasExecutions(dir->device)) builder_->SynthesizedExecution(dir->device);
  builder_->SortExecutions();
  // The big tables' slices are handed to the trace whatever happens, so that an error keeps what
  // was read before it.
  if (Status st = ReadBigTables(*dir); !st.ok()) return st;
  for (auto read : {&ExplorerProfile::ReadCollectives, &ExplorerProfile::ReadDeviceCounters,
                    &ExplorerProfile::ReadWarnings, &ExplorerProfile::ReadSummaries}) {
    if (Status st = (this->*read)(*dir); !st.ok()) return st;
  }
  BindFlows(*dir);
  return Status::Ok();
}

Status ExplorerProfile::Read(const std::string& path) {
  if (!ParsePart(options_.part, &filter_)) {
    return Status::InvalidArgument(
        "ImportOptions::part '" + options_.part +
        "' is not INSTANCE or INSTANCE/PID (ListTraceParts names the parts)");
  }
  ProfileDir root;
  if (Status st = ListDir(path, &root); !st.ok()) return st;
  std::vector<ProfileDir> devices;
  std::error_code ec;
  std::vector<std::string> subdirs;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && HasProfileTables(it->path().string())) {
      subdirs.push_back(it->path().string());
    }
  }
  std::sort(subdirs.begin(), subdirs.end());
  const bool root_is_device = root.has("Metadata");
  if (root_is_device) devices.push_back(root);
  for (const std::string& sub : subdirs) {
    ProfileDir d;
    if (Status st = ListDir(sub, &d); !st.ok()) return st;
    if (d.has("Metadata")) devices.push_back(std::move(d));
  }
  if (Status st = ReadSystemMetadata(root); !st.ok()) return st;
  for (ProfileDir& d : devices) {
    if (Status st = ReadDeviceMetadata(&d); !st.ok()) return st;
    if (Status st = CheckVersion(&d); !st.ok()) return st;
  }
  builder_->SetBaseTime(0);  // a profile that states no time at all
  for (auto read : {&ExplorerProfile::ReadDeviceProfileList, &ExplorerProfile::ReadSystemEvents,
                    &ExplorerProfile::ReadSystemHbmUsage}) {
    if (Status st = (this->*read)(root); !st.ok()) return st;
  }
  for (ProfileDir& d : devices) {
    const std::string folder = fs::path(d.path).filename().string();
    if (auto it = device_profiles.find(folder); it != device_profiles.end()) {
      d.instance = it->second.instance;
      d.pid = it->second.pid;
      d.nc = it->second.nc;
    }
    if (!filter_.Keeps(d.instance, d.pid)) continue;
    d.device = builder_->Device(d.instance, d.nc);
    if (Status st = ReadDeviceProfile(&d); !st.ok()) return st;
  }
  if (!root_is_device) {
    if (Status st = ReadWarnings(root); !st.ok()) return st;
  }
  CountUnknown(root);
  for (size_t i = root_is_device ? 1 : 0; i < devices.size(); ++i) CountUnknown(devices[i]);
  if (!unknown_tables_.empty() || !unknown_fields_.empty()) {
    Warn(fmt::format(
        "{} tables and {} fields the Neuron Explorer schema {} does not document were ignored: {}",
        unknown_tables_.size(), unknown_fields_.size(), kDocumentedSchemaVersion,
        Join(unknown_tables_, 8) +
            (unknown_tables_.empty() || unknown_fields_.empty() ? "" : "; ") +
            Join(unknown_fields_, 8)));
  }
  return Status::Ok();
}

bool IsNeuronExplorerDir(const std::string& path) { return HasProfileTables(path); }

Status ListNeuronExplorerParts(const std::string& path, std::vector<std::string>* parts) {
  parts->clear();
  ScratchProfile scratch;
  std::set<std::string> instances;
  const Status st = scratch.profile.ListInstances(path, &instances);
  instances.erase("");
  parts->assign(instances.begin(), instances.end());
  return st;
}

Status ReadNeuronExplorer(ImportInput* in, Trace* out, ImportStats* stats,
                          const ImportOptions& options) {
  NeuronTraceBuilder builder(out);
  ExplorerProfile profile(&builder, stats, options);
  Status st = profile.Read(in->path());
  builder.Finish();
  stats->slices = out->slices().size();
  stats->counters = out->counters().size();
  out->Finalize(profile.threads());
  return st;
}

}  // namespace opscope::import::neuron
