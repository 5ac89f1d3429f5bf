// Perfetto tracks to the model's processes and tracks (track_table.h).
#include "import/perfetto/track_table.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace opscope::import::perfetto {
namespace {

constexpr int kMaxParentDepth = 64;  // parent_uuid chains longer than this (or cyclic) stop here

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool NameSaysDevice(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kWords = {
      "gpu", "tpu", "xpu", "mtia", "neuroncore", "neuron core", "/device:", "npu"};
  const std::string lower = Lower(name);
  for (std::string_view w : kWords) {
    if (lower.find(w) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

uint32_t TrackTable::NewSlot(Slot s) {
  slots_.push_back(std::move(s));
  return static_cast<uint32_t>(slots_.size() - 1);
}

uint32_t TrackTable::NewProcess(ProcessSlot p) {
  processes_.push_back(std::move(p));
  return static_cast<uint32_t>(processes_.size() - 1);
}

uint32_t TrackTable::ProcessForPid(int32_t pid) {
  if (auto it = process_by_pid_.find(pid); it != process_by_pid_.end()) return it->second;
  ProcessSlot p;
  p.pid = pid;
  const uint32_t index = NewProcess(std::move(p));
  process_by_pid_[pid] = index;
  return index;
}

uint32_t TrackTable::Describe(const TrackDescription& d) {
  uint32_t index;
  if (auto it = by_uuid_.find(d.uuid); it != by_uuid_.end()) {
    index = it->second;
  } else {
    Slot s;
    s.uuid = d.uuid;
    index = NewSlot(std::move(s));
    by_uuid_[d.uuid] = index;
  }
  if (d.parent_uuid && *d.parent_uuid != d.uuid) slots_[index].parent_uuid = d.parent_uuid;
  if (d.merge_none) slots_[index].merge_none = true;
  switch (d.what) {
    case TrackDescription::What::kProcess:
      DescribeProcess(d, index);
      return index;
    case TrackDescription::What::kThread:
      DescribeThread(d, index);
      return index;
    case TrackDescription::What::kCounter: {
      Slot& s = slots_[index];
      s.type = SlotType::kCounter;
      s.counter_type = d.counter_type;
      s.unit_multiplier = d.unit_multiplier;
      s.incremental = d.incremental;
      break;
    }
    case TrackDescription::What::kNamed:
      break;
  }
  Slot& s = slots_[index];
  if (d.name && (s.merge_none || !s.events_seen || !s.name_locked)) s.descriptor_name = *d.name;
  return index;
}

// Slot `index` as the process descriptor `d` describes: the process of that pid seen through its
// threads first, else a new one (a pid reused by another process included); its name and labels.
void TrackTable::DescribeProcess(const TrackDescription& d, uint32_t index) {
  uint32_t p = slots_[index].type == SlotType::kProcess ? slots_[index].process : kNone;
  if (p == kNone) {
    auto it = process_by_pid_.find(d.pid);
    if (it != process_by_pid_.end() && processes_[it->second].track_slot == kNone &&
        (!processes_[it->second].uuid || *processes_[it->second].uuid == d.uuid)) {
      p = it->second;  // a process seen through its threads first
    } else {
      ProcessSlot fresh;
      fresh.pid = d.pid;
      p = NewProcess(std::move(fresh));  // new, or the pid reused by another process
      process_by_pid_[d.pid] = p;
    }
    processes_[p].uuid = d.uuid;
    processes_[p].track_slot = index;
    slots_[index].type = SlotType::kProcess;
    slots_[index].process = p;
  }
  if (d.process_or_thread_name) {
    processes_[p].name = *d.process_or_thread_name;
    slots_[index].descriptor_name = *d.process_or_thread_name;
  }
  if (!d.process_labels.empty()) {
    std::string labels;
    for (const std::string& l : d.process_labels) labels += (labels.empty() ? "" : ",") + l;
    processes_[p].labels = labels;
  }
}

// Slot `index` as the thread descriptor `d` describes: in its parent process (else the pid's), with
// its name.
void TrackTable::DescribeThread(const TrackDescription& d, uint32_t index) {
  Slot& s = slots_[index];
  if (s.type != SlotType::kThread) {
    uint32_t process = kNone;
    if (s.parent_uuid) {
      auto it = by_uuid_.find(*s.parent_uuid);
      if (it != by_uuid_.end() && slots_[it->second].type == SlotType::kProcess) {
        process = slots_[it->second].process;
      }
    }
    if (process == kNone) process = ProcessForPid(d.pid);
    Slot& t = slots_[index];
    t.type = SlotType::kThread;
    t.tid = d.tid;
    t.process = process;
    thread_by_id_[{d.pid, d.tid}] = index;
  }
  if (d.process_or_thread_name) {
    slots_[index].descriptor_name = *d.process_or_thread_name;
  } else if (d.name) {
    slots_[index].descriptor_name = *d.name;
  }
}

uint32_t TrackTable::ForUuid(uint64_t uuid) {
  if (auto it = by_uuid_.find(uuid); it != by_uuid_.end()) return it->second;
  Slot s;
  s.uuid = uuid;
  const uint32_t index = NewSlot(std::move(s));
  by_uuid_[uuid] = index;
  return index;
}

uint32_t TrackTable::ForThread(int32_t pid, int64_t tid) {
  if (auto it = thread_by_id_.find({pid, tid}); it != thread_by_id_.end()) return it->second;
  Slot s;
  s.type = SlotType::kThread;
  s.tid = tid;
  s.process = ProcessForPid(pid);
  const uint32_t index = NewSlot(std::move(s));
  thread_by_id_[{pid, tid}] = index;
  return index;
}

uint32_t TrackTable::ForProcess(int32_t pid) {
  const uint32_t p = ProcessForPid(pid);
  if (processes_[p].track_slot == kNone) {
    Slot s;
    s.type = SlotType::kProcess;
    s.process = p;
    processes_[p].track_slot = NewSlot(std::move(s));
  }
  return processes_[p].track_slot;
}

uint32_t TrackTable::ForGlobalLegacy() {
  if (global_legacy_ == kNone) {
    Slot s;
    s.descriptor_name = "Global instants";
    global_legacy_ = NewSlot(std::move(s));
  }
  return global_legacy_;
}

uint32_t TrackTable::ForAsync(bool process_scoped, int32_t pid, uint64_t id,
                              const std::string& id_scope, const std::string& name) {
  auto key = std::make_tuple(process_scoped, process_scoped ? pid : 0, id, id_scope);
  if (auto it = async_.find(key); it != async_.end()) return it->second;
  Slot s;
  if (!name.empty()) s.descriptor_name = name;
  if (process_scoped) s.process = ProcessForPid(pid);
  const uint32_t index = NewSlot(std::move(s));
  async_.emplace(std::move(key), index);
  return index;
}

uint32_t TrackTable::ForThreadCounter(uint32_t thread_slot, int32_t counter_type) {
  auto key = std::make_pair(thread_slot, counter_type);
  if (auto it = thread_counters_.find(key); it != thread_counters_.end()) return it->second;
  Slot s;
  s.type = SlotType::kCounter;
  s.counter_type = counter_type;
  s.process = slots_[thread_slot].process;
  const uint32_t index = NewSlot(std::move(s));
  thread_counters_.emplace(key, index);
  return index;
}

std::optional<int32_t> TrackTable::PidOf(uint32_t slot) const {
  const uint32_t p = ProcessOf(slot);
  if (p == kNone) return std::nullopt;
  return processes_[p].pid;
}

void TrackTable::NoteEvent(uint32_t slot, std::string_view name) {
  Slot& s = slots_[slot];
  s.has_events = true;
  if (s.events_seen) return;
  s.events_seen = true;
  s.name_locked = s.descriptor_name.has_value();
  s.event_name = std::string(name);
}

uint32_t TrackTable::ProcessOf(uint32_t slot) const {
  for (int depth = 0; slot != kNone && depth < kMaxParentDepth; ++depth) {
    const Slot& s = slots_[slot];
    if (s.process != kNone) return s.process;
    if (!s.parent_uuid) return kNone;
    auto it = by_uuid_.find(*s.parent_uuid);
    slot = it == by_uuid_.end() ? kNone : it->second;
  }
  return kNone;
}

uint32_t TrackTable::ThreadOf(uint32_t slot) const {
  for (int depth = 0; slot != kNone && depth < kMaxParentDepth; ++depth) {
    const Slot& s = slots_[slot];
    if (s.type == SlotType::kThread) return slot;
    if (s.type == SlotType::kProcess || !s.parent_uuid) return kNone;
    auto it = by_uuid_.find(*s.parent_uuid);
    slot = it == by_uuid_.end() ? kNone : it->second;
  }
  return kNone;
}

std::string TrackTable::NameOf(const Slot& s) const {
  if (s.descriptor_name) return *s.descriptor_name;
  if (s.type == SlotType::kProcess) return processes_[s.process].name;
  if (s.type == SlotType::kCounter) {
    if (s.counter_type == 1) return "thread_time";
    if (s.counter_type == 2) return "thread_instruction_count";
  }
  if (s.uuid && *s.uuid == 0 && s.type == SlotType::kNamed) return "Default Track";
  return s.event_name;
}

bool TrackTable::LooksLikeDevice(uint32_t slot) const {
  const Slot& s = slots_[slot];
  if (s.type == SlotType::kCounter) return false;
  if (s.device) return true;
  const std::string name = NameOf(s);
  if (NameSaysDevice(name) || Lower(name).rfind("stream", 0) == 0) return true;
  if (s.parent_uuid) {
    auto it = by_uuid_.find(*s.parent_uuid);
    if (it != by_uuid_.end() && it->second != slot && NameSaysDevice(NameOf(slots_[it->second]))) {
      return true;
    }
  }
  const uint32_t p = ProcessOf(slot);
  return p != kNone && NameSaysDevice(processes_[p].name);
}

void TrackTable::UseBlob(const OpscopeBlob& blob, Trace* trace) {
  for (const OpscopeBlob::Process& p : blob.processes) {
    const uint32_t index = trace->AddProcess(p.pid, p.name, p.is_device);
    Process& model = trace->MutableProcess(index);
    model.pid_text = p.pid_text;
    model.labels = trace->Intern(p.labels);
    model.sort_index = p.sort_index;
    blob_processes_[p.uuid] = index;
  }
  for (const OpscopeBlob::Track& t : blob.tracks) {
    auto p = blob_processes_.find(t.process_uuid);
    if (p == blob_processes_.end()) continue;  // a track of no listed process: found as any other
    const uint32_t index = trace->AddThreadTrack(p->second, t.tid, t.name, t.kind);
    Track& model = trace->MutableTrack(index);
    model.tid_text = t.tid_text;
    model.sort_index = t.sort_index;
    blob_tracks_[t.uuid] = index;
  }
  for (const auto& [lane, track] : blob.lanes) {
    if (auto it = blob_tracks_.find(track); it != blob_tracks_.end())
      blob_tracks_[lane] = it->second;
  }
}

uint32_t TrackTable::GlobalProcess(Trace* trace) {
  if (global_process_ == kNone) global_process_ = trace->AddProcess(0, "");
  return global_process_;
}

void TrackTable::Materialize(Trace* trace) {
  for (ProcessSlot& p : processes_) {
    if (p.uuid) {
      if (auto it = blob_processes_.find(*p.uuid); it != blob_processes_.end()) {
        p.model_process = it->second;
        continue;
      }
    }
    p.model_process = trace->AddProcess(p.pid, p.name);
    if (!p.labels.empty()) trace->MutableProcess(p.model_process).labels = trace->Intern(p.labels);
  }
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.uuid) {
      if (auto it = blob_tracks_.find(*s.uuid); it != blob_tracks_.end()) {
        s.model_track = it->second;
        continue;
      }
    }
    if (s.type == SlotType::kProcess && !s.has_events) continue;
    const uint32_t p = ProcessOf(i);
    const uint32_t process = p == kNone ? GlobalProcess(trace) : processes_[p].model_process;
    const bool device = LooksLikeDevice(i);
    TrackKind kind = TrackKind::kThread;
    if (s.type == SlotType::kCounter) {
      kind = TrackKind::kCounter;
    } else if (device) {
      kind = TrackKind::kDeviceStream;
      trace->MutableProcess(process).is_device = true;
    }
    int64_t tid = s.tid;
    if (s.type != SlotType::kThread)
      tid = s.uuid ? static_cast<int64_t>(*s.uuid) : next_synthetic_tid_++;
    slots_[i].model_track = trace->AddThreadTrack(process, tid, NameOf(slots_[i]), kind);
  }
}

}  // namespace opscope::import::perfetto
