// The trace model: building, Finalize (sort, nesting, flows, device links) and queries.
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <numeric>

#include "opscope/trace.h"
#include "trace/json_scan.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// StringTable

namespace {
constexpr size_t kBlockSize = 64 * 1024;
}  // namespace

size_t StringTable::Hash::operator()(std::string_view s) const noexcept {
  // The standard library's hash reads 8 bytes at a time; kernel names run to hundreds of bytes.
  return std::hash<std::string_view>{}(s);
}

StringTable::StringTable() { Intern(""); }
StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;
StringTable::~StringTable() = default;

StringId StringTable::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  StringId id = Append(s);
  index_.emplace(views_[id], id);
  return id;
}

StringId StringTable::Append(std::string_view s) {
  char* dst;
  if (s.size() + 1 > kBlockSize / 4) {
    // Large strings get a block of their own so they do not waste the shared block's tail.
    blocks_.push_back(std::make_unique<char[]>(s.size() + 1));
    dst = blocks_.back().get();
  } else {
    if (remaining_ < s.size() + 1) {
      blocks_.push_back(std::make_unique<char[]>(kBlockSize));
      cursor_ = blocks_.back().get();
      remaining_ = kBlockSize;
    }
    dst = cursor_;
    cursor_ += s.size() + 1;
    remaining_ -= s.size() + 1;
  }
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  dst[s.size()] = '\0';
  text_bytes_ += s.size() + 1;
  std::string_view stored(dst, s.size());
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  return id;
}

StringId StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNone : it->second;
}

size_t StringTable::MemoryBytes() const {
  return blocks_.size() * sizeof(void*) + text_bytes_ +
         views_.capacity() * sizeof(std::string_view) +
         index_.size() * (sizeof(std::string_view) + sizeof(StringId) + 2 * sizeof(void*)) +
         index_.bucket_count() * sizeof(void*);
}

// ---------------------------------------------------------------------------------------------
// ArgStore: args objects as JSON text, appended into 64 KiB blocks. Args are most of a trace's
// text and are read rarely (one event's details at a time), so once a store holds more than
// kCompressAbove bytes, each filled block is compressed with zstd and inflated on demand through a
// small LRU cache. Small traces (a live profiling session) are never compressed. Handles are
// dense: handle -> block by binary search over each block's first handle.
//
// Thread safety: Add/Seal from the building thread; Get from any thread (the cache is locked).

class Trace::ArgStore {
 public:
  ArgStore() = default;
  ArgStore(const ArgStore&) = delete;
  ArgStore& operator=(const ArgStore&) = delete;
  ~ArgStore() {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }

  uint32_t Add(std::string_view text) {
    if (open_.size() + text.size() > kBlockBytes && !open_.empty()) Seal();
    const auto handle = static_cast<uint32_t>(offsets_.size());
    offsets_.push_back(static_cast<uint32_t>(open_.size()));
    open_.append(text);
    raw_bytes_ += text.size();
    return handle;
  }

  // Moves the open block into the sealed list (compressed when the store is large).
  void Seal() {
    if (open_.empty()) return;
    Block b;
    b.first = open_first_;
    b.raw_size = static_cast<uint32_t>(open_.size());
    if (raw_bytes_ > kCompressAbove) {
      // One context for the store's life: a fresh one per block would allocate and map a few
      // hundred KiB every 64 KiB of args.
      if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
      // Compressed into a scratch buffer kept across blocks, then copied at its exact size.
      const size_t bound = ZSTD_compressBound(open_.size());
      if (scratch_size_ < bound) {
        scratch_ = std::make_unique<char[]>(bound);
        scratch_size_ = bound;
      }
      const size_t n =
          cctx_ == nullptr
              ? ZSTD_compress(scratch_.get(), bound, open_.data(), open_.size(), 1)
              : ZSTD_compressCCtx(cctx_, scratch_.get(), bound, open_.data(), open_.size(), 1);
      if (!ZSTD_isError(n) && n < open_.size()) {
        b.text.assign(scratch_.get(), n);
        b.compressed = true;
      }
    }
    if (!b.compressed) {
      b.text = std::move(open_);
      b.text.shrink_to_fit();
    }
    blocks_.push_back(std::move(b));
    open_ = std::string();
    open_first_ = static_cast<uint32_t>(offsets_.size());
  }

  size_t size() const { return offsets_.size(); }

  std::string Get(uint32_t handle) const {
    if (handle >= offsets_.size()) return "{}";
    const uint32_t begin = offsets_[handle];
    if (handle >= open_first_) {
      const uint32_t end =
          handle + 1 < offsets_.size() ? offsets_[handle + 1] : static_cast<uint32_t>(open_.size());
      return open_.substr(begin, end - begin);
    }
    // The block holding `handle`: the last one whose first handle is <= handle.
    auto it = std::upper_bound(blocks_.begin(), blocks_.end(), handle,
                               [](uint32_t h, const Block& b) { return h < b.first; });
    const size_t index = static_cast<size_t>(it - blocks_.begin()) - 1;
    const Block& block = blocks_[index];
    const uint32_t next_first = index + 1 < blocks_.size() ? blocks_[index + 1].first : open_first_;
    const uint32_t end = handle + 1 < next_first ? offsets_[handle + 1] : block.raw_size;
    if (!block.compressed) return block.text.substr(begin, end - begin);
    std::lock_guard<std::mutex> lock(mu_);
    const std::string& raw = Inflate(index);
    return raw.substr(begin, end - begin);
  }

  size_t MemoryBytes() const {
    size_t bytes = open_.capacity() + offsets_.capacity() * sizeof(uint32_t) +
                   blocks_.capacity() * sizeof(Block);
    for (const Block& b : blocks_) bytes += b.text.capacity();
    return bytes;
  }

 private:
  static constexpr size_t kBlockBytes = 64 * 1024;
  static constexpr size_t kCompressAbove = 256u << 10;
  static constexpr size_t kCacheBlocks = 16;
  struct Block {
    std::string text;  // raw or zstd-compressed
    uint32_t first = 0;
    uint32_t raw_size = 0;
    bool compressed = false;
  };

  // Caller holds mu_.
  const std::string& Inflate(size_t index) const {
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->first == index) {
        cache_.splice(cache_.begin(), cache_, it);
        return cache_.front().second;
      }
    }
    if (cache_.size() >= kCacheBlocks) cache_.pop_back();
    const Block& b = blocks_[index];
    std::string raw(b.raw_size, '\0');
    if (dctx_ == nullptr) dctx_ = ZSTD_createDCtx();
    const size_t n =
        dctx_ == nullptr
            ? ZSTD_decompress(raw.data(), raw.size(), b.text.data(), b.text.size())
            : ZSTD_decompressDCtx(dctx_, raw.data(), raw.size(), b.text.data(), b.text.size());
    if (ZSTD_isError(n)) raw = std::string(b.raw_size, ' ');  // cannot happen for our own data
    cache_.emplace_front(index, std::move(raw));
    return cache_.front().second;
  }

  std::vector<Block> blocks_;
  std::vector<uint32_t> offsets_;  // per handle: byte offset inside its block
  std::string open_;
  uint32_t open_first_ = 0;
  size_t raw_bytes_ = 0;
  mutable std::mutex mu_;
  mutable std::list<std::pair<size_t, std::string>> cache_;  // most recent first
  ZSTD_CCtx* cctx_ = nullptr;                                // building thread only
  std::unique_ptr<char[]> scratch_;  // compression output, building thread only
  size_t scratch_size_ = 0;
  mutable ZSTD_DCtx* dctx_ = nullptr;  // under mu_
};

// ---------------------------------------------------------------------------------------------
// Trace building

Trace::Trace() : args_(std::make_unique<ArgStore>()) {}
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
  pid_index_.emplace(pid, index);
  return index;
}

uint32_t Trace::FindOrAddProcess(int64_t pid, std::string_view pid_text) {
  if (auto it = pid_index_.find(pid); it != pid_index_.end()) return it->second;
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
  track_index_.emplace(TrackKey(process, tid), index);
  return index;
}

uint32_t Trace::FindOrAddTrack(uint32_t process, int64_t tid, std::string_view tid_text,
                               TrackKind kind) {
  auto range = track_index_.equal_range(TrackKey(process, tid));
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

void Trace::AddFlowEndpoint(uint64_t id, StringId category, StringId name, uint32_t track,
                            int64_t ts_ns, bool is_start, bool binds_enclosing) {
  pending_flows_.push_back({id, ts_ns, category, name, track, is_start, binds_enclosing});
}

uint32_t Trace::AddArgs(std::string_view json_object_text) {
  if (json_object_text.empty() || json_object_text == "{}") return kNone;
  return args_->Add(json_object_text);
}

// ---------------------------------------------------------------------------------------------
// Finalize

namespace {

// Indices [0, n) ordered by track, then by sort_key(i) (a pair compared lexicographically) within
// a track, ties in index order; items whose track is out of range come last. Bucketing by track is
// a stable O(n) pass, and each track's run is usually already in order (producers write
// per-thread events in time order), so it rarely needs sorting.
template <typename TrackOf, typename SortKey>
std::vector<uint32_t> GroupByTrack(uint32_t n, size_t tracks, TrackOf track_of, SortKey sort_key) {
  const size_t buckets = tracks + 1;
  auto bucket_of = [&](uint32_t i) {
    const uint32_t t = track_of(i);
    return t < tracks ? static_cast<size_t>(t) : buckets - 1;
  };
  std::vector<uint32_t> next(buckets + 1, 0);
  bool grouped = true;  // already in track order (the importer stages slices per track)
  for (uint32_t i = 0; i < n; ++i) {
    const size_t b = bucket_of(i);
    ++next[b + 1];
    if (i > 0 && b < bucket_of(i - 1)) grouped = false;
  }
  for (size_t b = 0; b < buckets; ++b) next[b + 1] += next[b];
  const std::vector<uint32_t> bounds(next.begin(), next.end());
  std::vector<uint32_t> order(n);
  if (grouped) {
    std::iota(order.begin(), order.end(), 0u);
  } else {
    for (uint32_t i = 0; i < n; ++i) order[next[bucket_of(i)]++] = i;
  }
  // Unsorted runs are nearly sorted in practice (a handful of events out of place): merge the
  // natural ascending runs pairwise, O(n log runs), stable.
  auto less = [&](uint32_t a, uint32_t b) { return sort_key(a) < sort_key(b); };
  std::vector<uint32_t> runs;
  for (size_t b = 0; b < buckets; ++b) {
    const uint32_t first = bounds[b], last = bounds[b + 1];
    runs.clear();
    runs.push_back(first);
    for (uint32_t k = first + 1; k < last; ++k) {
      if (less(order[k], order[k - 1])) runs.push_back(k);
    }
    if (runs.size() == 1) continue;
    runs.push_back(last);
    while (runs.size() > 2) {
      size_t out = 0;
      for (size_t r = 0; r + 2 < runs.size(); r += 2) {
        std::inplace_merge(order.begin() + runs[r], order.begin() + runs[r + 1],
                           order.begin() + runs[r + 2], less);
        runs[out++] = runs[r];
      }
      if ((runs.size() - 1) % 2 == 1) runs[out++] = runs[runs.size() - 2];
      runs[out++] = last;
      runs.resize(out);
    }
  }
  return order;
}

// Stable sort of `items` by an integer key in O(n): one counting pass when the keys span at most a
// few times n values (Kineto's External ids are dense counters), else LSD radix passes of 11 bits
// over key - min (correlation ids are sparser). Returns false, leaving `items` alone, when the keys
// span 2^48 or more (hashed string ids): the caller compares instead.
template <typename T, typename KeyOf>
bool RadixSort(std::vector<T>* items, KeyOf key_of) {
  const size_t n = items->size();
  if (n < 2) return true;
  int64_t lo = key_of((*items)[0]), hi = lo;
  for (const T& x : *items) {
    const int64_t k = key_of(x);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  auto offset = [&](const T& x) {
    return static_cast<uint64_t>(key_of(x)) - static_cast<uint64_t>(lo);
  };
  std::vector<T> out(n);
  if (range <= 4 * n + 1024) {
    std::vector<uint32_t> next(range + 2, 0);
    for (const T& x : *items) ++next[offset(x) + 1];
    for (uint64_t b = 0; b <= range; ++b) next[b + 1] += next[b];
    for (const T& x : *items) out[next[offset(x)]++] = x;
    items->swap(out);
    return true;
  }
  if ((range >> 48) != 0) return false;
  // 11-bit digits: a 2048-entry count table stays in L1, and ids spanning up to 2^22 take two
  // passes.
  constexpr int kBits = 11;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  std::vector<uint32_t> next((size_t{1} << kBits) + 1);
  for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += kBits) {
    std::fill(next.begin(), next.end(), 0);
    for (const T& x : *items) ++next[((offset(x) >> shift) & kMask) + 1];
    for (size_t b = 0; b + 1 < next.size(); ++b) next[b + 1] += next[b];
    for (const T& x : *items) out[next[(offset(x) >> shift) & kMask]++] = x;
    items->swap(out);
  }
  return true;
}

}  // namespace

void Trace::Finalize() {
  if (finalized_) return;

  // 1. Sort slices by (track, ts, longer first, insertion order) and remap known flow endpoints.
  const auto n = static_cast<uint32_t>(slices_.size());
  std::vector<uint32_t> order = GroupByTrack(
      n, tracks_.size(), [this](uint32_t i) { return slices_[i].track; },
      [this](uint32_t i) {
        return std::pair<int64_t, int64_t>(slices_[i].ts_ns, -slices_[i].dur_ns);
      });
  if (!flows_.empty()) {  // flows added with known slice indices follow their slices
    std::vector<uint32_t> new_index(n);
    for (uint32_t i = 0; i < n; ++i) new_index[order[i]] = i;
    for (Flow& f : flows_) {
      if (f.from != kNone && f.from < n) f.from = new_index[f.from];
      if (f.to != kNone && f.to < n) f.to = new_index[f.to];
    }
  }
  // Permute in place, cycle by cycle (one copy per slice), so a large trace never holds two
  // copies of its slices. order[j] = the old index of the slice that belongs at j.
  for (uint32_t i = 0; i < n; ++i) {
    if (order[i] == i) continue;
    const Slice first = slices_[i];
    uint32_t j = i;
    for (;;) {
      const uint32_t k = order[j];
      order[j] = j;
      if (k == i) {
        slices_[j] = first;
        break;
      }
      slices_[j] = slices_[k];
      j = k;
    }
  }
  std::vector<uint32_t>().swap(order);

  // 2. Per-track ranges.
  track_begin_.assign(tracks_.size() + 1, 0);
  for (const Slice& s : slices_) {
    if (s.track < tracks_.size()) ++track_begin_[s.track + 1];
  }
  for (size_t t = 0; t < tracks_.size(); ++t) track_begin_[t + 1] += track_begin_[t];

  // 3. Nesting: each lane keeps a stack of open slices; a slice goes to the first lane where it
  // nests inside the innermost open slice (or the lane is empty). Overlaps that do not nest open a
  // new lane, so nothing is dropped.
  struct Open {
    int64_t end;
    uint32_t index;
  };
  std::vector<std::vector<Open>> lanes;
  for (uint32_t t = 0; t < tracks_.size(); ++t) {
    lanes.clear();
    for (uint32_t i = track_begin_[t]; i < track_begin_[t + 1]; ++i) {
      Slice& s = slices_[i];
      const int64_t end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
      size_t lane = 0;
      for (; lane < lanes.size(); ++lane) {
        auto& stack = lanes[lane];
        while (!stack.empty() && stack.back().end <= s.ts_ns &&
               !(stack.back().end == s.ts_ns && s.dur_ns == 0 &&
                 slices_[stack.back().index].ts_ns == s.ts_ns)) {
          stack.pop_back();
        }
        if (stack.empty() || stack.back().end >= end) break;
      }
      if (lane == lanes.size()) lanes.emplace_back();
      auto& stack = lanes[lane];
      s.parent = stack.empty() ? kNone : stack.back().index;
      s.depth = static_cast<uint8_t>(std::min<size_t>(stack.size(), 255));
      s.lane = static_cast<uint16_t>(std::min<size_t>(lane, 65535));
      stack.push_back({end, i});
    }
    tracks_[t].lanes =
        static_cast<uint16_t>(std::max<size_t>(1, std::min<size_t>(lanes.size(), 65535)));
  }

  // 4. Bind flow endpoints to slices: the innermost slice on the endpoint's track starting at the
  // endpoint's ts; else the innermost slice enclosing it; for non-enclosing finish events, the next
  // slice starting at or after it. Endpoints are visited per track in time order, so each track's
  // slices are swept once instead of searched per endpoint.
  if (!pending_flows_.empty()) {
    const auto m = static_cast<uint32_t>(pending_flows_.size());
    std::vector<uint32_t> bound(m, kNone);
    std::vector<uint32_t> by_place = GroupByTrack(
        m, tracks_.size(), [this](uint32_t k) { return pending_flows_[k].track; },
        [this](uint32_t k) { return std::pair<int64_t, int64_t>(pending_flows_[k].ts_ns, 0); });
    uint32_t cursor_track = kNone;
    uint32_t first = 0, last = 0, next = 0;  // next: first slice of the track starting after ts
    for (uint32_t k : by_place) {
      const auto& e = pending_flows_[k];
      if (e.track >= tracks_.size()) continue;
      if (e.track != cursor_track) {
        cursor_track = e.track;
        first = next = track_begin_[e.track];
        last = track_begin_[e.track + 1];
      }
      while (next < last && slices_[next].ts_ns <= e.ts_ns) ++next;
      uint32_t hit = kNone;
      if (next != first) {
        const uint32_t prev = next - 1;
        if (slices_[prev].ts_ns == e.ts_ns) {
          hit = prev;
        } else {
          // Walk up from the latest-starting slice to one that encloses ts.
          for (uint32_t c = prev; c != kNone; c = slices_[c].parent) {
            if (slices_[c].ts_ns <= e.ts_ns && e.ts_ns <= slices_[c].ts_ns + slices_[c].dur_ns) {
              hit = c;
              break;
            }
          }
        }
      }
      const bool enclosing = e.binds_enclosing || e.is_start;
      if (hit == kNone && !enclosing && next != last) hit = next;
      bound[k] = hit;
    }
    std::vector<uint32_t>().swap(by_place);

    // Endpoints are joined by (category, id) with a sort rather than a map: a large trace has
    // millions of them. Within a pair the last start and the last finish win.
    struct Key {
      uint64_t id;
      StringId category;
      uint32_t k;  // endpoint index: keeps the order stable
      bool operator<(const Key& o) const {
        if (category != o.category) return category < o.category;
        if (id != o.id) return id < o.id;
        return k < o.k;
      }
    };
    std::vector<Key> keys(m);
    for (uint32_t k = 0; k < m; ++k) {
      keys[k] = {pending_flows_[k].id, pending_flows_[k].category, k};
    }
    if (!std::is_sorted(keys.begin(), keys.end())) {
      // By id, then by category, both stable over the endpoint order; a comparison sort when the
      // ids span too much (ids past 2^63, e.g. hashed string ids, read as negative).
      const bool by_id = RadixSort(&keys, [](const Key& x) { return static_cast<int64_t>(x.id); });
      if (!by_id ||
          !RadixSort(&keys, [](const Key& x) { return static_cast<int64_t>(x.category); })) {
        std::sort(keys.begin(), keys.end());
      }
    }
    for (uint32_t g = 0; g < m;) {
      const Key& head = keys[g];
      uint32_t from = kNone, to = kNone, name_of = kNone;
      uint32_t h = g;
      for (; h < m && keys[h].category == head.category && keys[h].id == head.id; ++h) {
        const uint32_t k = keys[h].k;
        if (pending_flows_[k].is_start) {
          from = bound[k];
          name_of = k;
        } else {
          to = bound[k];
        }
      }
      if (from != kNone && to != kNone) {
        flows_.push_back({head.id, head.category, pending_flows_[name_of].name, from, to});
      }
      g = h;
    }
    pending_flows_.clear();
    pending_flows_.shrink_to_fit();
  }

  // 5. Device links. A device activity's runtime call is the host-side runtime/driver slice with
  // the same correlation. Its op is the host op that launched it: a cpu_op carrying its (or its
  // runtime call's) External id that encloses the runtime call; else the innermost cpu_op
  // enclosing the runtime call (External ids repeat across sessions and some producers reuse
  // them, so an id match far from the launch is not trusted); with no runtime call known, the
  // op or user annotation carrying its External id.
  // Lookups are sorted (key, slice) vectors, searched from the previous hit: device activity
  // mostly arrives in id order, so most lookups cost a step or two.
  links_.clear();
  link_bits_.assign((static_cast<size_t>(n) + 63) / 64, 0);
  link_rank_.clear();
  std::vector<uint32_t> linked;  // the slice of each entry of links_
  using KeyIndex = std::pair<int64_t, uint32_t>;
  std::vector<KeyIndex> ops, annotations, runtimes;
  for (uint32_t i = 0; i < n; ++i) {
    const Slice& s = slices_[i];
    if (s.kind == ActivityKind::kCpuOp && s.external_id != 0) {
      ops.emplace_back(s.external_id, i);
    } else if (s.kind == ActivityKind::kUserAnnotation && s.external_id != 0) {
      annotations.emplace_back(s.external_id, i);
    } else if ((s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) &&
               s.correlation != 0) {
      runtimes.emplace_back(s.correlation, i);
    }
  }
  // Built in slice order, so equal keys are already in index order: a stable sort by key alone
  // gives the (key, index) order.
  for (auto* v : {&ops, &annotations, &runtimes}) {
    if (std::is_sorted(v->begin(), v->end())) continue;
    if (!RadixSort(v, [](const KeyIndex& x) { return x.first; })) std::sort(v->begin(), v->end());
  }
  // Finds the first entry carrying a key, galloping from the previous answer.
  struct Finger {
    const std::vector<KeyIndex>& v;
    size_t at = 0;
    // Index of the first entry with `key`, or v.size().
    size_t Find(int64_t key) {
      if (v.empty()) return 0;
      size_t lo = 0, hi = v.size();
      if (at < v.size() && v[at].first < key) {
        // Gallop forward from the last hit.
        size_t step = 1;
        lo = at + 1;
        while (lo + step < v.size() && v[lo + step].first < key) {
          lo += step;
          step *= 2;
        }
        hi = std::min(v.size(), lo + step + 1);
      } else if (at < v.size() && at > 0 && v[at - 1].first < key) {
        lo = hi = at;  // v[at - 1] < key <= v[at]
      }
      const auto it =
          std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(lo),
                           v.begin() + static_cast<std::ptrdiff_t>(hi), KeyIndex{key, 0});
      at = static_cast<size_t>(it - v.begin());
      return at < v.size() && v[at].first == key ? at : v.size();
    }
  };
  Finger runtime_finger{runtimes};
  Finger op_finger{ops};
  Finger annotation_finger{annotations};
  auto encloses = [this](uint32_t op, const Slice& rt) {
    const Slice& o = slices_[op];
    return o.track == rt.track && o.ts_ns <= rt.ts_ns && rt.ts_ns <= o.ts_ns + o.dur_ns;
  };
  // A cpu_op with External id `key` enclosing `rt`, or kNone.
  auto op_enclosing = [&](int64_t key, const Slice& rt) -> uint32_t {
    for (size_t j = op_finger.Find(key); j < ops.size() && ops[j].first == key; ++j) {
      if (encloses(ops[j].second, rt)) return ops[j].second;
    }
    return kNone;
  };
  uint32_t device_slices = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Slice& s = slices_[i];
    if (!IsDeviceActivity(s.kind) || s.kind == ActivityKind::kDeviceAnnotation) continue;
    DeviceLink link;
    if (s.correlation != 0) {
      const size_t j = runtime_finger.Find(s.correlation);
      if (j < runtimes.size()) link.runtime = runtimes[j].second;
    }
    if (link.runtime != kNone) {
      const Slice& rt = slices_[link.runtime];
      if (s.external_id != 0) link.op = op_enclosing(s.external_id, rt);
      if (link.op == kNone && rt.external_id != 0 && rt.external_id != s.external_id) {
        link.op = op_enclosing(rt.external_id, rt);
      }
      for (uint32_t p = rt.parent; link.op == kNone && p != kNone; p = slices_[p].parent) {
        if (slices_[p].kind == ActivityKind::kCpuOp) link.op = p;
      }
    }
    if (link.op == kNone && s.external_id != 0) {
      size_t j = op_finger.Find(s.external_id);
      if (j < ops.size()) {
        link.op = ops[j].second;
      } else if ((j = annotation_finger.Find(s.external_id)) < annotations.size()) {
        link.op = annotations[j].second;
      }
    }
    if (link.op == kNone && link.runtime == kNone) continue;
    link_bits_[i / 64] |= uint64_t{1} << (i % 64);
    links_.push_back(link);
    linked.push_back(i);
    if (link.op != kNone) ++device_slices;
  }
  link_rank_.resize(link_bits_.size());
  for (size_t w = 0, before = 0; w < link_bits_.size(); ++w) {
    link_rank_[w] = static_cast<uint32_t>(before);
    before += static_cast<size_t>(__builtin_popcountll(link_bits_[w]));
  }
  // Device activity per op, as one index array in slice order (CSR): a few bytes per slice
  // instead of a heap list per op.
  device_activity_begin_.clear();
  device_activity_.clear();
  if (device_slices != 0) {
    device_activity_begin_.assign(static_cast<size_t>(n) + 1, 0);
    for (const DeviceLink& link : links_) {
      if (link.op != kNone) ++device_activity_begin_[link.op + 1];
    }
    for (uint32_t i = 0; i < n; ++i) device_activity_begin_[i + 1] += device_activity_begin_[i];
    device_activity_.resize(device_slices);
    std::vector<uint32_t> fill(device_activity_begin_.begin(), device_activity_begin_.end() - 1);
    for (size_t k = 0; k < links_.size(); ++k) {  // in slice order
      if (links_[k].op != kNone) device_activity_[fill[links_[k].op]++] = linked[k];
    }
  }

  // 6. Instants and counters in time order.
  std::stable_sort(instants_.begin(), instants_.end(),
                   [](const Instant& a, const Instant& b) { return a.ts_ns < b.ts_ns; });
  std::stable_sort(counters_.begin(), counters_.end(),
                   [](const CounterSample& a, const CounterSample& b) {
                     if (a.track != b.track) return a.track < b.track;
                     return a.ts_ns < b.ts_ns;
                   });
  finalized_ = true;
}

// ---------------------------------------------------------------------------------------------
// Queries

std::pair<uint32_t, uint32_t> Trace::TrackSlices(uint32_t track) const {
  if (track + 1 >= track_begin_.size()) return {0, 0};
  return {track_begin_[track], track_begin_[track + 1]};
}

const DeviceLink& Trace::Link(uint32_t slice) const {
  static const DeviceLink kEmpty;
  const size_t word = slice / 64;
  if (word >= link_bits_.size()) return kEmpty;
  const uint64_t bits = link_bits_[word];
  const uint64_t bit = uint64_t{1} << (slice % 64);
  if ((bits & bit) == 0) return kEmpty;
  return links_[link_rank_[word] + static_cast<uint32_t>(__builtin_popcountll(bits & (bit - 1)))];
}

std::span<const uint32_t> Trace::DeviceActivityOf(uint32_t op_slice) const {
  if (static_cast<size_t>(op_slice) + 1 >= device_activity_begin_.size()) return {};
  const uint32_t begin = device_activity_begin_[op_slice];
  return {device_activity_.data() + begin, device_activity_begin_[op_slice + 1] - begin};
}

std::string Trace::ArgsJson(uint32_t args) const {
  if (args == kNone || !args_ || args >= args_->size()) return "{}";
  return args_->Get(args);
}

namespace {

// Skips whitespace; returns the new position.
size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && internal::IsJsonSpace(s[i])) ++i;
  return i;
}

}  // namespace

std::optional<std::string> Trace::FindArg(uint32_t args, std::string_view key) const {
  if (args == kNone || !args_ || args >= args_->size()) return std::nullopt;
  const std::string text = args_->Get(args);
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
  size_t bytes = strings_.MemoryBytes() + (args_ ? args_->MemoryBytes() : 0);
  bytes += slices_.size() * sizeof(Slice) + links_.capacity() * sizeof(DeviceLink) +
           link_bits_.capacity() * sizeof(uint64_t) + link_rank_.capacity() * sizeof(uint32_t);
  bytes += instants_.capacity() * sizeof(Instant) + counters_.capacity() * sizeof(CounterSample);
  bytes += flows_.capacity() * sizeof(Flow) + tracks_.capacity() * sizeof(Track);
  bytes += processes_.capacity() * sizeof(Process) + track_begin_.capacity() * sizeof(uint32_t);
  bytes += (device_activity_begin_.capacity() + device_activity_.capacity()) * sizeof(uint32_t);
  return bytes;
}

}  // namespace opscope
