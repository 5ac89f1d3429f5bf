// The trace model: strings, building and queries (Finalize: trace_finalize.cc; args:
// arg_store.cc).
#include <algorithm>
#include <cstring>

#include "base/huge_array.h"
#include "base/json_scan.h"
#include "opscope/trace.h"
#include "trace/arg_store.h"
#include "trace/trace_storage.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// StringTable

namespace {
constexpr size_t kBlockSize = 64 * 1024;
}  // namespace

size_t StringTable::Storage::Hash::operator()(std::string_view s) const noexcept {
  // The standard library's hash reads 8 bytes at a time; kernel names run to hundreds of bytes.
  return std::hash<std::string_view>{}(s);
}

StringTable::StringTable() : storage_(std::make_unique<Storage>()) { Intern(""); }
StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;
StringTable::~StringTable() = default;

StringId StringTable::Intern(std::string_view s) {
  if (auto it = storage_->index.find(s); it != storage_->index.end()) return it->second;
  StringId id = Append(s);
  storage_->index.emplace(views_[id], id);
  return id;
}

StringId StringTable::Append(std::string_view s) {
  char* dst;
  if (s.size() + 1 > kBlockSize / 4) {
    // Large strings get a block of their own so they do not waste the shared block's tail.
    storage_->blocks.push_back(std::make_unique<char[]>(s.size() + 1));
    dst = storage_->blocks.back().get();
  } else {
    if (storage_->remaining < s.size() + 1) {
      storage_->blocks.push_back(std::make_unique<char[]>(kBlockSize));
      storage_->cursor = storage_->blocks.back().get();
      storage_->remaining = kBlockSize;
    }
    dst = storage_->cursor;
    storage_->cursor += s.size() + 1;
    storage_->remaining -= s.size() + 1;
  }
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  dst[s.size()] = '\0';
  storage_->text_bytes += s.size() + 1;
  std::string_view stored(dst, s.size());
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  return id;
}

StringId StringTable::Find(std::string_view s) const {
  auto it = storage_->index.find(s);
  return it == storage_->index.end() ? kNone : it->second;
}

size_t StringTable::MemoryBytes() const {
  return storage_->blocks.size() * sizeof(void*) + storage_->text_bytes +
         views_.capacity() * sizeof(std::string_view) +
         storage_->index.size() *
             (sizeof(std::string_view) + sizeof(StringId) + 2 * sizeof(void*)) +
         storage_->index.bucket_count() * sizeof(void*);
}

// ---------------------------------------------------------------------------------------------
// Trace building

Trace::Storage::Storage() : pending_flows(internal::HugePageResource()) {}

Trace::Trace() : storage_(std::make_unique<Storage>()) {}
Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;
Trace::~Trace() = default;

uint32_t Trace::AddProcess(int64_t pid, std::string_view name, bool is_device) {
  Process p;
  p.pid = pid;
  p.name = Intern(name);
  p.is_device = is_device;
  auto index = static_cast<uint32_t>(processes_.size());
  processes_.push_back(std::move(p));
  storage_->pid_index.emplace(pid, index);
  return index;
}

uint32_t Trace::FindOrAddProcess(int64_t pid, std::string_view pid_text) {
  if (auto it = storage_->pid_index.find(pid); it != storage_->pid_index.end()) return it->second;
  uint32_t index = AddProcess(pid, "");
  processes_[index].pid_text = std::string(pid_text);
  return index;
}

namespace {
uint64_t TrackKey(uint32_t process, int64_t tid) {
  // Mix the process index into the tid; collisions are resolved by the caller re-checking.
  return (static_cast<uint64_t>(process) * 0x9E3779B97F4A7C15ull) ^ static_cast<uint64_t>(tid);
}
}  // namespace

uint32_t Trace::AddThreadTrack(uint32_t process, int64_t tid, std::string_view name,
                               TrackKind kind) {
  Track t;
  t.process = process;
  t.tid = tid;
  t.name = Intern(name);
  t.kind = kind;
  auto index = static_cast<uint32_t>(tracks_.size());
  tracks_.push_back(std::move(t));
  storage_->track_index.emplace(TrackKey(process, tid), index);
  return index;
}

uint32_t Trace::FindOrAddTrack(uint32_t process, int64_t tid, std::string_view tid_text,
                               TrackKind kind) {
  auto range = storage_->track_index.equal_range(TrackKey(process, tid));
  for (auto it = range.first; it != range.second; ++it) {
    const Track& t = tracks_[it->second];
    if (t.process == process && t.tid == tid) return it->second;
  }
  uint32_t index = AddThreadTrack(process, tid, "", kind);
  tracks_[index].tid_text = std::string(tid_text);
  return index;
}

uint32_t Trace::AddSlice(const Slice& s) {
  auto index = static_cast<uint32_t>(slices_.size());
  slices_.push_back(s);
  finalized_ = false;
  return index;
}

void Trace::AddSlices(std::span<const Slice> slices) {
  slices_.insert(slices_.end(), slices.begin(), slices.end());
  finalized_ = false;
}

Slice* Trace::AppendSlices(size_t n) {
  const size_t at = slices_.size();
  slices_.resize(at + n);
  finalized_ = false;
  return slices_.data() + at;
}

void Trace::TruncateSlices(size_t n) {
  if (n < slices_.size()) slices_.resize(n);
  finalized_ = false;
}

void Trace::AddSlices(std::vector<Slice>&& slices) {
  if (slices_.empty()) {
    slices_.swap(slices);
  } else {
    slices_.insert(slices_.end(), slices.begin(), slices.end());
  }
  slices.clear();
  finalized_ = false;
}

void Trace::AddFlowEndpoint(uint64_t id, StringId category, StringId name, uint32_t track,
                            int64_t ts_ns, bool is_start, bool binds_enclosing) {
  storage_->pending_flows.push_back(
      internal::PendingFlowEndpoint{id, ts_ns, category, name, track, is_start, binds_enclosing});
}

uint32_t Trace::AddArgs(std::string_view json_object_text) {
  if (json_object_text.empty() || json_object_text == "{}") return kNone;
  return storage_->args.Add(json_object_text);
}

uint32_t Trace::AddPackedArgs(PackedArgs* packed) { return storage_->args.AddPacked(packed); }

// ---------------------------------------------------------------------------------------------
// Queries

std::pair<uint32_t, uint32_t> Trace::TrackSlices(uint32_t track) const {
  if (track + 1 >= storage_->track_begin.size()) return {0, 0};
  return {storage_->track_begin[track], storage_->track_begin[track + 1]};
}

const DeviceLink& Trace::Link(uint32_t slice) const {
  static const DeviceLink kEmpty;
  const size_t word = slice / 64;
  if (word >= storage_->link_bits.size()) return kEmpty;
  const uint64_t bits = storage_->link_bits[word];
  const uint64_t bit = uint64_t{1} << (slice % 64);
  if ((bits & bit) == 0) return kEmpty;
  return storage_->links[storage_->link_rank[word] +
                         static_cast<uint32_t>(__builtin_popcountll(bits & (bit - 1)))];
}

std::span<const uint32_t> Trace::DeviceActivityOf(uint32_t op_slice) const {
  if (static_cast<size_t>(op_slice) + 1 >= storage_->device_activity_begin.size()) return {};
  const uint32_t begin = storage_->device_activity_begin[op_slice];
  return {storage_->device_activity.data() + begin,
          storage_->device_activity_begin[op_slice + 1] - begin};
}

std::string Trace::ArgsJson(uint32_t args) const {
  if (args == kNone || !storage_ || args >= storage_->args.size()) return "{}";
  return storage_->args.Get(args);
}

namespace {

// Skips whitespace; returns the new position.
size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && internal::IsJsonSpace(s[i])) ++i;
  return i;
}

}  // namespace

std::optional<std::string> Trace::FindArg(uint32_t args, std::string_view key) const {
  if (args == kNone || !storage_ || args >= storage_->args.size()) return std::nullopt;
  const std::string text = storage_->args.Get(args);
  std::string_view s = text;
  size_t i = SkipWs(s, 0);
  if (i >= s.size() || s[i] != '{') return std::nullopt;
  i = SkipWs(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = internal::JsonStringEnd(s.data(), i + 1, s.size());
    if (key_end == internal::kJsonNoEnd) return std::nullopt;
    std::string_view k = s.substr(i + 1, key_end - i - 2);
    i = SkipWs(s, key_end);
    if (i >= s.size() || s[i] != ':') return std::nullopt;
    i = SkipWs(s, i + 1);
    const size_t value_end = internal::JsonValueEnd(s, i);
    if (value_end == internal::kJsonNoEnd) return std::nullopt;
    if (k == key) return std::string(s.substr(i, value_end - i));
    i = SkipWs(s, value_end);
    if (i < s.size() && s[i] == ',') i = SkipWs(s, i + 1);
  }
  return std::nullopt;
}

bool Trace::HasDeviceActivity() const {
  for (const Slice& s : slices_) {
    if (IsDeviceActivity(s.kind)) return true;
  }
  return false;
}

size_t Trace::MemoryBytes() const {
  size_t bytes = strings_.MemoryBytes() + (storage_ ? storage_->args.MemoryBytes() : 0);
  bytes += slices_.size() * sizeof(Slice) + storage_->links.capacity() * sizeof(DeviceLink) +
           storage_->link_bits.capacity() * sizeof(uint64_t) +
           storage_->link_rank.capacity() * sizeof(uint32_t);
  bytes += instants_.capacity() * sizeof(Instant) + counters_.capacity() * sizeof(CounterSample);
  bytes += flows_.capacity() * sizeof(Flow) + tracks_.capacity() * sizeof(Track);
  bytes +=
      processes_.capacity() * sizeof(Process) + storage_->track_begin.capacity() * sizeof(uint32_t);
  bytes += (storage_->device_activity_begin.capacity() + storage_->device_activity.capacity()) *
           sizeof(uint32_t);
  return bytes;
}

}  // namespace opscope
