// A torch.profiler trace and its Neuron profile as one trace (torch_merge.h): which folders hold
// both, reading each part with its own reader, and copying both into the output with the links
// (torch_link.h) applied: the torch trace's processes, ops and ids as they are; the Neuron
// profile's runtime calls on the torch trace's threads where the pid and tid match, its devices as
// they are, its ids moved past the torch trace's, and each linked runtime call and execution given
// its framework op's External id.
#include "import/neuron/torch_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "base/cores.h"
#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/kineto/kineto_reader.h"
#include "import/neuron/neuron_reader.h"
#include "import/neuron/torch_link.h"

namespace opscope::import::neuron {
namespace {

namespace fs = std::filesystem;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Where each piece of a source trace went in the output.
struct Remap {
  std::vector<uint32_t> process, track, slice;
  int64_t external_offset = 0, correlation_offset = 0;
  int64_t shift_ns = 0;  // added to every time
};

class Merger {
 public:
  Merger(const Trace& torch, const Trace& neuron, const TorchNeuronLinks& links, Trace* out)
      : t_(torch), n_(neuron), l_(links), out_(out) {}

  void Run() {
    CopyTorch();
    CopyNeuron();
    LinkFlows();
    Metadata();
  }

 private:
  // Strings, args and tracks of `src` into the output.
  StringId Str(const Trace& src, StringId id) { return id == 0 ? 0 : out_->Intern(src.Str(id)); }
  uint32_t Args(const Trace& src, uint32_t args) {
    return args == kNone ? kNone : out_->AddArgs(src.ArgsJson(args));
  }
  uint32_t CopyProcess(const Trace& src, uint32_t p) {
    const Process& from = src.processes()[p];
    const uint32_t to = out_->AddProcess(from.pid, src.Str(from.name), from.is_device);
    Process& np = out_->MutableProcess(to);
    np.pid_text = from.pid_text;
    np.labels = Str(src, from.labels);
    np.sort_index = from.sort_index;
    return to;
  }
  uint32_t CopyTrack(const Trace& src, uint32_t k, uint32_t process) {
    const Track& from = src.tracks()[k];
    const uint32_t to = out_->AddThreadTrack(process, from.tid, src.Str(from.name), from.kind);
    Track& nt = out_->MutableTrack(to);
    nt.tid_text = from.tid_text;
    nt.sort_index = from.sort_index;
    return to;
  }

  // Slices, instants, counters and flows of `src` whose track was copied (and that `drop` keeps).
  void CopyEvents(const Trace& src, const std::vector<bool>& drop, Remap* m,
                  const std::vector<int64_t>* external_ids) {
    m->slice.assign(src.slices().size(), kNone);
    for (uint32_t i = 0; i < src.slices().size(); ++i) {
      const Slice& from = src.slices()[i];
      if (drop[i] || m->track[from.track] == kNone) continue;
      Slice s = from;
      s.ts_ns = internal::SatAdd(s.ts_ns, m->shift_ns);
      s.name = Str(src, from.name);
      s.category = Str(src, from.category);
      s.input_shapes = Str(src, from.input_shapes);
      s.track = m->track[from.track];
      s.args = Args(src, from.args);
      s.parent = kNone;
      s.depth = 0;
      s.lane = 0;
      if (external_ids != nullptr) {
        s.external_id = (*external_ids)[i];
      } else if (s.external_id != 0) {
        s.external_id = internal::SatAdd(s.external_id, m->external_offset);
      }
      if (s.correlation != 0)
        s.correlation = internal::SatAdd(s.correlation, m->correlation_offset);
      m->slice[i] = out_->AddSlice(s);
    }
    for (Instant i : src.instants()) {
      if (i.track != kNone && (i.track = m->track[i.track]) == kNone) continue;
      i.ts_ns = internal::SatAdd(i.ts_ns, m->shift_ns);
      i.name = Str(src, i.name);
      i.category = Str(src, i.category);
      i.args = Args(src, i.args);
      out_->AddInstant(i);
    }
    for (CounterSample c : src.counters()) {
      if (c.track == kNone || (c.track = m->track[c.track]) == kNone) continue;
      c.ts_ns = internal::SatAdd(c.ts_ns, m->shift_ns);
      out_->AddCounter(c);
    }
    for (const Flow& f : src.flows()) {
      if (f.from >= m->slice.size() || f.to >= m->slice.size()) continue;
      const uint32_t from = m->slice[f.from], to = m->slice[f.to];
      if (from == kNone || to == kNone) continue;
      out_->AddFlow({++flow_id_, Str(src, f.category), Str(src, f.name), from, to});
    }
  }

  // The torch trace as it is, less its device processes when the Neuron profile's executions
  // replace their activity.
  void CopyTorch() {
    tm_.process.assign(t_.processes().size(), kNone);
    tm_.track.assign(t_.tracks().size(), kNone);
    const bool drop_devices = l_.torch_device_dropped > 0;
    for (uint32_t p = 0; p < t_.processes().size(); ++p) {
      if (drop_devices && t_.processes()[p].is_device) continue;
      tm_.process[p] = CopyProcess(t_, p);
    }
    for (uint32_t k = 0; k < t_.tracks().size(); ++k) {
      const uint32_t p = t_.tracks()[k].process;
      if (tm_.process[p] != kNone) tm_.track[k] = CopyTrack(t_, k, tm_.process[p]);
    }
    for (const Slice& s : t_.slices()) {
      max_external_ = std::max(max_external_, s.external_id);
      max_correlation_ = std::max(max_correlation_, s.correlation);
    }
    // Torch runtime calls that launch a Neuron execution with no runtime call of its own get a
    // correlation if they have none: the execution's link to its call.
    torch_correlation_.assign(t_.slices().size(), 0);
    for (uint32_t j = 0; j < n_.slices().size(); ++j) {
      const uint32_t rt = l_.torch_runtime_of[j];
      if (rt == kNone || torch_correlation_[rt] != 0) continue;
      torch_correlation_[rt] = t_.slices()[rt].correlation;
      if (torch_correlation_[rt] == 0) torch_correlation_[rt] = ++fresh_correlation_;
    }
    CopyEvents(t_, l_.drop_torch, &tm_, nullptr);
    for (uint32_t i = 0; i < t_.slices().size(); ++i) {
      if (tm_.slice[i] == kNone || torch_correlation_[i] == 0) continue;
      if (t_.slices()[i].correlation == 0) {
        out_->MutableSlice(tm_.slice[i]).correlation =
            internal::SatAdd(max_correlation_, torch_correlation_[i]);
      }
    }
  }

  // The External id that links to torch op `op` (its own; a fresh one when it has none).
  int64_t OpExternalId(uint32_t op) {
    const int64_t own = t_.slices()[op].external_id;
    if (own != 0) return own;
    auto [it, inserted] = fresh_op_ids_.try_emplace(op, 0);
    if (inserted) {
      it->second = internal::SatAdd(internal::SatAdd(max_external_, n_external_span_),
                                    static_cast<int64_t>(fresh_op_ids_.size()));
      out_->MutableSlice(tm_.slice[op]).external_id = it->second;
    }
    return it->second;
  }

  // Each Neuron slice's External id in the output: its op's when linked (a runtime call, the
  // executions it launched, their instructions), else its own moved past the torch trace's.
  std::vector<int64_t> NeuronExternalIds() {
    int64_t max_neuron = 0;
    for (const Slice& s : n_.slices()) max_neuron = std::max(max_neuron, s.external_id);
    n_external_span_ = max_neuron;
    const auto& ns = n_.slices();
    std::vector<int64_t> ids(ns.size(), 0);
    std::map<int64_t, int64_t> moved;  // the Neuron External id of a linked execution -> op's
    for (uint32_t j = 0; j < ns.size(); ++j) {
      uint32_t op = l_.op_of[j];
      if (op == kNone && ns[j].kind == ActivityKind::kKernel) {
        const uint32_t rt = n_.Link(j).runtime;
        if (rt != kNone) op = l_.op_of[rt];
      }
      if (op == kNone || tm_.slice[op] == kNone) continue;
      ids[j] = OpExternalId(op);
      if (ns[j].kind == ActivityKind::kKernel && ns[j].external_id != 0) {
        moved.try_emplace(ns[j].external_id, ids[j]);
      }
    }
    for (uint32_t j = 0; j < ns.size(); ++j) {
      if (ids[j] != 0 || ns[j].external_id == 0) continue;
      const auto it = moved.find(ns[j].external_id);
      ids[j] = it != moved.end() ? it->second : internal::SatAdd(ns[j].external_id, max_external_);
    }
    return ids;
  }

  // The Neuron profile: host processes whose pid the torch trace has become that process (their
  // threads its threads); the rest as they are.
  void CopyNeuron() {
    nm_.process.assign(n_.processes().size(), kNone);
    nm_.track.assign(n_.tracks().size(), kNone);
    nm_.external_offset = max_external_;
    nm_.correlation_offset = internal::SatAdd(max_correlation_, fresh_correlation_);
    nm_.shift_ns = l_.neuron_shift_ns;
    std::map<int64_t, uint32_t> torch_pids;
    for (uint32_t p = 0; p < t_.processes().size(); ++p) {
      if (!t_.processes()[p].is_device && tm_.process[p] != kNone) {
        torch_pids.try_emplace(t_.processes()[p].pid, tm_.process[p]);
      }
    }
    std::vector<bool> joined(n_.processes().size(), false);
    for (uint32_t p = 0; p < n_.processes().size(); ++p) {
      const Process& from = n_.processes()[p];
      // The Neuron reader keeps a host process's OS pid as its sort index.
      const auto it = from.is_device ? torch_pids.end() : torch_pids.find(from.sort_index);
      joined[p] = it != torch_pids.end();
      nm_.process[p] = joined[p] ? it->second : CopyProcess(n_, p);
    }
    for (uint32_t k = 0; k < n_.tracks().size(); ++k) {
      const Track& from = n_.tracks()[k];
      nm_.track[k] = joined[from.process] && from.kind == TrackKind::kThread
                         ? out_->FindOrAddTrack(nm_.process[from.process], from.tid)
                         : CopyTrack(n_, k, nm_.process[from.process]);
    }
    const std::vector<int64_t> ids = NeuronExternalIds();
    // Executions launched by a torch runtime call take its correlation.
    CopyEvents(n_, l_.drop_neuron, &nm_, &ids);
    for (uint32_t j = 0; j < n_.slices().size(); ++j) {
      const uint32_t rt = l_.torch_runtime_of[j];
      if (rt == kNone || nm_.slice[j] == kNone || tm_.slice[rt] == kNone) continue;
      out_->MutableSlice(nm_.slice[j]).correlation = out_->MutableSlice(tm_.slice[rt]).correlation;
    }
  }

  // An arrow from each framework op to the Neuron runtime call (or execution) linked to it.
  void LinkFlows() {
    const StringId category = out_->Intern("neuron_merge");
    const StringId by_id = out_->Intern("linked by id"), by_time = out_->Intern("linked by time");
    for (uint32_t j = 0; j < n_.slices().size(); ++j) {
      const uint32_t op = l_.op_of[j];
      if (op == kNone || nm_.slice[j] == kNone || tm_.slice[op] == kNone) continue;
      out_->AddFlow({++flow_id_, category, l_.rule[j] == LinkRule::kId ? by_id : by_time,
                     tm_.slice[op], nm_.slice[j]});
    }
  }

  void Metadata() {
    TraceMetadata& md = out_->metadata();
    md = t_.metadata();
    md.device_type = n_.metadata().device_type;
    for (const auto& kv : n_.metadata().extra) md.extra.push_back(kv);
    for (const auto& kv : n_.metadata().dropped) md.dropped.push_back(kv);
    md.skipped_events += n_.metadata().skipped_events;
    for (const std::string& w : n_.metadata().warnings) md.warnings.push_back(w);
    for (const std::string& w : l_.warnings) md.warnings.push_back(w);
  }

  const Trace& t_;
  const Trace& n_;
  const TorchNeuronLinks& l_;
  Trace* out_;
  Remap tm_, nm_;
  int64_t max_external_ = 0, max_correlation_ = 0, fresh_correlation_ = 0, n_external_span_ = 0;
  std::vector<int64_t> torch_correlation_;
  std::map<uint32_t, int64_t> fresh_op_ids_;
  uint64_t flow_id_ = 0;
};

// What the merge did, as a JSON object under TraceMetadata::extra's "neuronMerge".
std::string MergeInfo(const TorchNeuronParts& parts, const TorchNeuronLinks& l) {
  JsonWriter w;
  w.BeginObject();
  w.Field("torch_trace", parts.torch_trace);
  w.Field("neuron_profile", parts.neuron_profile);
  w.Key("clock_aligned");
  w.Bool(l.aligned);
  w.Field("neuron_shift_ns", l.neuron_shift_ns);
  w.Field("linked_by_id", static_cast<int64_t>(l.linked_by_id));
  w.Field("linked_by_time", static_cast<int64_t>(l.linked_by_time));
  w.Field("unlinked", static_cast<int64_t>(l.unlinked));
  w.Field("torch_device_events_dropped", static_cast<int64_t>(l.torch_device_dropped));
  w.Field("torch_runtime_calls_replaced", static_cast<int64_t>(l.torch_runtime_replaced));
  w.Field("neuron_framework_events_dropped", static_cast<int64_t>(l.neuron_framework_dropped));
  w.EndObject();
  return w.Take();
}

void AddStats(const ImportStats& from, ImportStats* into) {
  into->input_bytes += from.input_bytes;
  into->json_bytes += from.json_bytes;
  into->events += from.events;
  into->instants += from.instants;
  into->flow_endpoints += from.flow_endpoints;
  into->metadata += from.metadata;
  into->skipped += from.skipped;
  into->read_seconds += from.read_seconds;
  into->parse_seconds += from.parse_seconds;
  into->merge_seconds += from.merge_seconds;
  into->finish_seconds += from.finish_seconds;
}

}  // namespace

void MergeTorchNeuron(const Trace& torch, const Trace& neuron, const TorchNeuronParts& parts,
                      Trace* out, int threads) {
  const TorchNeuronLinks links = LinkTorchNeuron(torch, neuron);
  Merger(torch, neuron, links, out).Run();
  out->metadata().extra.emplace_back("neuronMerge", MergeInfo(parts, links));
  out->Finalize(threads);
}

bool FindTorchNeuronParts(const std::string& path, TorchNeuronParts* parts) {
  *parts = TorchNeuronParts();
  // The profile first (a listing, no file read), so that a folder with none, such as a job's
  // folder of torch traces, costs no file's head.
  std::string profile;
  std::vector<std::string> json;
  size_t sub_profiles = 0;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (IsNeuronExplorerDir(it->path().string()) && sub_profiles++ == 0) {
        profile = it->path().string();
      }
    } else if (it->is_regular_file(ec) && (EndsWith(name, ".json") || EndsWith(name, ".json.gz"))) {
      json.push_back(it->path().string());
    }
  }
  if (IsNeuronExplorerDir(path)) {
    profile = path;
  } else if (sub_profiles != 1) {
    return false;
  }
  std::sort(json.begin(), json.end());
  for (const std::string& file : json) {
    if (DetectTraceFormat(file) != TraceFormat::kKinetoJson) continue;
    if (!parts->torch_trace.empty()) return false;  // several torch traces: a job of ranks
    parts->torch_trace = file;
  }
  parts->neuron_profile = profile;
  return !parts->torch_trace.empty();
}

bool IsTorchNeuronDir(const std::string& path) {
  TorchNeuronParts parts;
  return FindTorchNeuronParts(path, &parts);
}

Status ReadTorchNeuron(ImportInput* in, Trace* out, ImportStats* stats,
                       const ImportOptions& options) {
  TorchNeuronParts parts;
  if (!FindTorchNeuronParts(in->path(), &parts)) {
    out->Finalize();
    return Status::InvalidInput(
        "no longer holds one torch.profiler trace and one Neuron Explorer profile", 0, in->path());
  }
  Trace torch, neuron;
  ImportStats torch_stats, neuron_stats;
  std::unique_ptr<ImportInput> torch_in;
  Status torch_st =
      ImportInput::OpenFile(parts.torch_trace, &torch_in, options.pipe_writer_wait_ms);
  if (torch_st.ok()) {
    torch_st = ReadKinetoJson(torch_in.get(), &torch, &torch_stats, options);
  } else {
    torch.Finalize();
  }
  std::unique_ptr<ImportInput> neuron_in = ImportInput::OpenDirectory(parts.neuron_profile);
  Status neuron_st = ReadNeuronExplorer(neuron_in.get(), &neuron, &neuron_stats, options);
  MergeTorchNeuron(torch, neuron, parts, out, internal::DefaultThreadsNow(options.threads));
  AddStats(torch_stats, stats);
  AddStats(neuron_stats, stats);
  const std::vector<std::string>* lists[] = {&torch_stats.warnings, &neuron_stats.warnings};
  for (const std::vector<std::string>* w : lists) {
    for (const std::string& m : *w) {
      if (stats->warnings.size() < options.max_warning_messages) stats->warnings.push_back(m);
    }
  }
  for (size_t i = torch.metadata().warnings.size() + neuron.metadata().warnings.size();
       i < out->metadata().warnings.size(); ++i) {  // the merge's own
    if (stats->warnings.size() < options.max_warning_messages) {
      stats->warnings.push_back(out->metadata().warnings[i]);
    }
  }
  stats->slices = out->slices().size();
  stats->counters = out->counters().size();
  if (!torch_st.ok()) return std::move(torch_st).InFile(parts.torch_trace);
  return std::move(neuron_st).InFile(parts.neuron_profile);
}

}  // namespace opscope::import::neuron
