// Trace::Finalize, in named steps: slices grouped by track and sorted, nested, flow endpoints
// bound to slices, device activity linked to its runtime call and op.
#include <algorithm>
#include <array>
#include <exception>
#include <numeric>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/huge_array.h"
#include "base/parallel_for.h"
#include "opscope/trace.h"
#include "trace/trace_storage.h"

namespace opscope {
namespace {

// Slices per thread below which a step runs on the calling thread alone: starting a thread costs
// tens of microseconds, a slice's share of a step a few nanoseconds.
constexpr size_t kMinSlicesPerThread = size_t{1} << 16;

// How many parts a step over `n` slices is split into with `threads` threads.
int PartsFor(int threads, size_t n) {
  return static_cast<int>(
      std::clamp<size_t>(n / kMinSlicesPerThread, 1, static_cast<size_t>(std::max(threads, 1))));
}

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
  std::vector<uint32_t> order;
  internal::ReserveHuge(&order, n);
  order.resize(n);
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
  std::vector<T> out;
  internal::ReserveHuge(&out, n);
  out.resize(n);
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

// Puts items[order[j]] at j for every j, cycle by cycle (one copy per item), so a large trace
// never holds two copies of its slices. `order` is consumed (left as the identity).
template <typename T>
void PermuteInPlace(std::vector<T>* items, std::vector<uint32_t>* order) {
  std::vector<T>& v = *items;
  std::vector<uint32_t>& o = *order;
  for (uint32_t i = 0; i < o.size(); ++i) {
    if (o[i] == i) continue;
    const T first = v[i];
    uint32_t j = i;
    for (;;) {
      const uint32_t k = o[j];
      o[j] = j;
      if (k == i) {
        v[j] = first;
        break;
      }
      v[j] = v[k];
      j = k;
    }
  }
}

// Whether `slices` are already in (track, ts, longer first) order, slices without a valid track
// last: the importer hands them over grouped by track, each track usually in time order, and then
// one read-only pass replaces GroupByTrack's index array and PermuteInPlace's pass (any order of
// equal keys is insertion order, which a stable sort would keep).
bool SlicesInTrackOrder(const std::vector<Slice>& slices, size_t tracks) {
  auto bucket = [tracks](const Slice& s) {
    return s.track < tracks ? static_cast<size_t>(s.track) : tracks;
  };
  for (size_t i = 1; i < slices.size(); ++i) {
    const Slice& a = slices[i - 1];
    const Slice& b = slices[i];
    const size_t ba = bucket(a), bb = bucket(b);
    if (bb != ba) {
      if (bb < ba) return false;
      continue;
    }
    if (b.ts_ns < a.ts_ns || (b.ts_ns == a.ts_ns && b.dur_ns > a.dur_ns)) return false;
  }
  return true;
}

// BindToSlices over `places` (endpoint indices grouped by track, in time order within a track;
// whole tracks only), writing (*bound)[k] for each k in it.
template <typename Endpoint>
void BindRange(std::span<const Endpoint> endpoints, const std::vector<Slice>& slices,
               const std::vector<uint32_t>& track_begin, std::span<const uint32_t> places,
               std::vector<uint32_t>* bound) {
  const size_t tracks = track_begin.size() - 1;
  uint32_t cursor_track = kNone;
  uint32_t first = 0, last = 0, next = 0;  // next: first slice of the track starting after ts
  for (uint32_t k : places) {
    const Endpoint& e = endpoints[k];
    if (e.track >= tracks) continue;
    if (e.track != cursor_track) {
      cursor_track = e.track;
      first = next = track_begin[e.track];
      last = track_begin[e.track + 1];
    }
    while (next < last && slices[next].ts_ns <= e.ts_ns) ++next;
    uint32_t hit = kNone;
    if (next != first) {
      const uint32_t prev = next - 1;
      if (slices[prev].ts_ns == e.ts_ns) {
        hit = prev;
      } else {
        // Walk up from the latest-starting slice to one that encloses ts.
        for (uint32_t c = prev; c != kNone; c = slices[c].parent) {
          if (slices[c].ts_ns <= e.ts_ns && e.ts_ns <= slices[c].ts_ns + slices[c].dur_ns) {
            hit = c;
            break;
          }
        }
      }
    }
    const bool enclosing = e.binds_enclosing || e.is_start;
    if (hit == kNone && !enclosing && next != last) hit = next;
    (*bound)[k] = hit;
  }
}

// The slice each flow endpoint binds to (kNone when none): the innermost slice on the endpoint's
// track starting at the endpoint's ts; else the innermost slice enclosing it; for non-enclosing
// finish events, the next slice starting at or after it. Endpoints are visited per track in time
// order, so each track's slices are swept once instead of searched per endpoint; tracks are
// independent, so ranges of them are swept on up to `threads` threads.
template <typename Endpoint>
std::vector<uint32_t> BindToSlices(std::span<const Endpoint> endpoints,
                                   const std::vector<Slice>& slices,
                                   const std::vector<uint32_t>& track_begin, int threads) {
  const auto m = static_cast<uint32_t>(endpoints.size());
  const size_t tracks = track_begin.size() - 1;
  std::vector<uint32_t> bound;
  internal::AssignHuge(&bound, m, kNone);
  const std::vector<uint32_t> by_place = GroupByTrack(
      m, tracks, [&](uint32_t k) { return endpoints[k].track; },
      [&](uint32_t k) { return std::pair<int64_t, int64_t>(endpoints[k].ts_ns, 0); });
  // Parts of by_place that start where a track does.
  const int parts = PartsFor(threads, m);
  std::vector<uint32_t> from(static_cast<size_t>(parts) + 1, m);
  from[0] = 0;
  for (int p = 1; p < parts; ++p) {
    uint32_t at = std::max(from[static_cast<size_t>(p) - 1],
                           static_cast<uint32_t>(uint64_t{m} * static_cast<uint64_t>(p) /
                                                 static_cast<uint64_t>(parts)));
    while (at > 0 && at < m && endpoints[by_place[at]].track == endpoints[by_place[at - 1]].track) {
      ++at;
    }
    from[static_cast<size_t>(p)] = at;
  }
  internal::ParallelFor(parts, static_cast<size_t>(parts), [&](size_t p) {
    BindRange(endpoints, slices, track_begin,
              std::span<const uint32_t>(by_place).subspan(from[p], from[p + 1] - from[p]), &bound);
  });
  return bound;
}

// Flows from bound endpoints: endpoints are joined by (category, id) with a sort rather than a
// map (a large trace has millions of them). Within a pair the last start and the last finish win.
template <typename Endpoint>
void PairEndpoints(std::span<const Endpoint> endpoints, const std::vector<uint32_t>& bound,
                   std::vector<Flow>* flows) {
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
  const auto m = static_cast<uint32_t>(endpoints.size());
  std::vector<Key> keys;
  internal::ReserveHuge(&keys, m);
  for (uint32_t k = 0; k < m; ++k) keys.push_back({endpoints[k].id, endpoints[k].category, k});
  if (!std::is_sorted(keys.begin(), keys.end())) {
    // By id, then by category, both stable over the endpoint order; a comparison sort when the
    // ids span too much (ids past 2^63, e.g. hashed string ids, read as negative).
    const bool by_id = RadixSort(&keys, [](const Key& x) { return static_cast<int64_t>(x.id); });
    if (!by_id ||
        !RadixSort(&keys, [](const Key& x) { return static_cast<int64_t>(x.category); })) {
      std::sort(keys.begin(), keys.end());
    }
  }
  internal::GrowHuge(flows, m / 2);  // a flow takes two endpoints at least
  for (uint32_t g = 0; g < m;) {
    const Key& head = keys[g];
    uint32_t from = kNone, to = kNone, name_of = kNone;
    uint32_t h = g;
    for (; h < m && keys[h].category == head.category && keys[h].id == head.id; ++h) {
      const uint32_t k = keys[h].k;
      if (endpoints[k].is_start) {
        from = bound[k];
        name_of = k;
      } else {
        to = bound[k];
      }
    }
    if (from != kNone && to != kNone) {
      flows->push_back({head.id, head.category, endpoints[name_of].name, from, to});
    }
    g = h;
  }
}

// (key, slice) lists a device activity's links are looked up in, sorted by key then slice.
using KeyIndex = std::pair<int64_t, uint32_t>;
struct LinkKeys {
  std::vector<KeyIndex> ops;          // cpu_op slices by External id
  std::vector<KeyIndex> annotations;  // user annotations by External id
  std::vector<KeyIndex> runtimes;     // runtime / driver slices by correlation
};

// Which key list a slice goes to: 0 ops, 1 annotations, 2 runtimes, 3 none.
int LinkKeyList(const Slice& s) {
  if (s.kind == ActivityKind::kCpuOp && s.external_id != 0) return 0;
  if (s.kind == ActivityKind::kUserAnnotation && s.external_id != 0) return 1;
  if ((s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) && s.correlation != 0) {
    return 2;
  }
  return 3;
}

LinkKeys CollectLinkKeys(const std::vector<Slice>& slices) {
  LinkKeys keys;
  std::vector<KeyIndex>* lists[] = {&keys.ops, &keys.annotations, &keys.runtimes};
  // Counted first, so each list is allocated once at its size (growing by doubling copied and
  // faulted in twice what it kept).
  size_t counts[4] = {0, 0, 0, 0};
  for (const Slice& s : slices) ++counts[LinkKeyList(s)];
  for (int l = 0; l < 3; ++l) internal::ReserveHuge(lists[l], counts[l]);
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    switch (LinkKeyList(s)) {
      case 0:
        keys.ops.emplace_back(s.external_id, i);
        break;
      case 1:
        keys.annotations.emplace_back(s.external_id, i);
        break;
      case 2:
        keys.runtimes.emplace_back(s.correlation, i);
        break;
      default:
        break;
    }
  }
  // Built in slice order, so equal keys are already in index order: a stable sort by key alone
  // gives the (key, index) order.
  for (auto* v : {&keys.ops, &keys.annotations, &keys.runtimes}) {
    if (std::is_sorted(v->begin(), v->end())) continue;
    if (!RadixSort(v, [](const KeyIndex& x) { return x.first; })) std::sort(v->begin(), v->end());
  }
  return keys;
}

// Finds the first entry carrying a key, galloping from the previous answer: device activity
// mostly arrives in id order, so most lookups cost a step or two.
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
    const auto it = std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(lo),
                                     v.begin() + static_cast<std::ptrdiff_t>(hi), KeyIndex{key, 0});
    at = static_cast<size_t>(it - v.begin());
    return at < v.size() && v[at].first == key ? at : v.size();
  }
};

constexpr size_t KindIndex(ActivityKind kind) { return static_cast<uint8_t>(kind); }

// The link of one device activity slice (see Trace::LinkDeviceActivity for the rule). Find reads
// a slice's correlation and External id alone, and runs of activities share both (a Neuron
// execution's millions of instructions): the last answer is kept for the next.
class LinkFinder {
 public:
  LinkFinder(const std::vector<Slice>& slices, const LinkKeys& keys)
      : slices_(slices),
        keys_(keys),
        runtimes_{keys.runtimes},
        ops_{keys.ops},
        annotations_{keys.annotations} {}

  DeviceLink Find(const Slice& s) {
    if (!have_last_ || s.correlation != last_correlation_ || s.external_id != last_external_id_) {
      last_ = Search(s);
      last_correlation_ = s.correlation;
      last_external_id_ = s.external_id;
      have_last_ = true;
    }
    return last_;
  }

 private:
  DeviceLink Search(const Slice& s) {
    DeviceLink link;
    if (s.correlation != 0) {
      const size_t j = runtimes_.Find(s.correlation);
      if (j < keys_.runtimes.size()) link.runtime = keys_.runtimes[j].second;
    }
    if (link.runtime != kNone) {
      const Slice& rt = slices_[link.runtime];
      if (s.external_id != 0) link.op = OpEnclosing(s.external_id, rt);
      if (link.op == kNone && rt.external_id != 0 && rt.external_id != s.external_id) {
        link.op = OpEnclosing(rt.external_id, rt);
      }
      for (uint32_t p = rt.parent; link.op == kNone && p != kNone; p = slices_[p].parent) {
        if (slices_[p].kind == ActivityKind::kCpuOp) link.op = p;
      }
    }
    if (link.op == kNone && s.external_id != 0) {
      size_t j = ops_.Find(s.external_id);
      if (j < keys_.ops.size()) {
        link.op = keys_.ops[j].second;
      } else if ((j = annotations_.Find(s.external_id)) < keys_.annotations.size()) {
        link.op = keys_.annotations[j].second;
      }
    }
    return link;
  }

  // A cpu_op with External id `key` enclosing the runtime call `rt`, or kNone.
  uint32_t OpEnclosing(int64_t key, const Slice& rt) {
    for (size_t j = ops_.Find(key); j < keys_.ops.size() && keys_.ops[j].first == key; ++j) {
      const Slice& o = slices_[keys_.ops[j].second];
      if (o.track == rt.track && o.ts_ns <= rt.ts_ns && rt.ts_ns <= o.ts_ns + o.dur_ns) {
        return keys_.ops[j].second;
      }
    }
    return kNone;
  }

  const std::vector<Slice>& slices_;
  const LinkKeys& keys_;
  Finger runtimes_, ops_, annotations_;
  bool have_last_ = false;
  int64_t last_correlation_ = 0, last_external_id_ = 0;
  DeviceLink last_;
};

}  // namespace

void Trace::Finalize(int threads) {
  if (finalized_) return;
  SortSlicesByTrack();
  NestSlices(threads);
  // Flow binding on one side, device links and the time order of instants and counters on the
  // other: both read the nested slices alone and write members of their own, and each has a serial
  // part (grouping endpoints and pairing flows; the link keys), so with threads they run side by
  // side. Small traces stay on the calling thread.
  // The link side is the longer (its parallel part above all), so it takes every thread: while
  // flow binding runs, its threads and the link's share the cores, and once binding is done the
  // link's threads have them all (its ranges are handed out one at a time, several per thread).
  const bool side_by_side =
      threads >= 2 && !storage_->pending_flows.empty() && slices_.size() >= kMinSlicesPerThread;
  const int bind_threads = side_by_side ? std::max(threads / 2, 1) : threads;
  const int link_threads = threads;
  internal::ParallelFor(side_by_side ? 2 : 1, 2, [&](size_t side) {
    if (side == 0) {
      BindFlowEndpoints(bind_threads);
    } else {
      LinkDeviceActivity(link_threads);
      SortInstantsAndCounters();
    }
  });
  finalized_ = true;
}

void Trace::SortInstantsAndCounters() {
  std::stable_sort(instants_.begin(), instants_.end(),
                   [](const Instant& a, const Instant& b) { return a.ts_ns < b.ts_ns; });
  std::stable_sort(counters_.begin(), counters_.end(),
                   [](const CounterSample& a, const CounterSample& b) {
                     if (a.track != b.track) return a.track < b.track;
                     return a.ts_ns < b.ts_ns;
                   });
}

// Slices in (track, ts, longer first, insertion order) order, flows added with slice indices
// remapped, and each track's range in storage_->track_begin.
void Trace::SortSlicesByTrack() {
  const auto n = static_cast<uint32_t>(slices_.size());
  if (!SlicesInTrackOrder(slices_, tracks_.size())) {
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
    PermuteInPlace(&slices_, &order);
  }
  storage_->track_begin.assign(tracks_.size() + 1, 0);
  for (const Slice& s : slices_) {
    if (s.track < tracks_.size()) ++storage_->track_begin[s.track + 1];
  }
  for (size_t t = 0; t < tracks_.size(); ++t)
    storage_->track_begin[t + 1] += storage_->track_begin[t];
}

// Nesting: each lane keeps a stack of open slices; a slice goes to the first lane where it nests
// inside the innermost open slice (or the lane is empty). Overlaps that do not nest open a new
// lane, so nothing is dropped. Sets parent, depth and lane of every slice and lanes per track.
void Trace::NestSlices(int threads) {
  const int parts = PartsFor(threads, slices_.size());
  const auto tracks = static_cast<uint32_t>(tracks_.size());
  if (parts == 1) {
    NestTracks(0, tracks);
    return;
  }
  // Tracks are independent: split them into ranges of about the same number of slices.
  std::vector<uint32_t> first(static_cast<size_t>(parts) + 1, tracks);
  first[0] = 0;
  const uint64_t total = storage_->track_begin[tracks];
  uint32_t t = 0;
  for (int p = 1; p < parts; ++p) {
    const uint64_t target = total * static_cast<uint64_t>(p) / static_cast<uint64_t>(parts);
    while (t < tracks && storage_->track_begin[t] < target) ++t;
    first[static_cast<size_t>(p)] = t;
  }
  internal::ParallelFor(parts, static_cast<size_t>(parts),
                        [&](size_t p) { NestTracks(first[p], first[p + 1]); });
}

void Trace::NestTracks(uint32_t first, uint32_t last) {
  struct Open {
    int64_t end;
    uint32_t index;
  };
  std::vector<std::vector<Open>> lanes;
  for (uint32_t t = first; t < last; ++t) {
    lanes.clear();
    for (uint32_t i = storage_->track_begin[t]; i < storage_->track_begin[t + 1]; ++i) {
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
}

// Flow endpoints bound to slices and paired into flows_ (pending endpoints are released).
void Trace::BindFlowEndpoints(int threads) {
  if (storage_->pending_flows.empty()) return;
  const std::span<const internal::PendingFlowEndpoint> endpoints(storage_->pending_flows);
  const std::vector<uint32_t> bound =
      BindToSlices(endpoints, slices_, storage_->track_begin, threads);
  PairEndpoints(endpoints, bound, &flows_);
  storage_->pending_flows.clear();
  storage_->pending_flows.shrink_to_fit();
}

// Device links. A device activity's runtime call is the host-side runtime/driver slice with the
// same correlation. Its op is the host op that launched it: a cpu_op carrying its (or its runtime
// call's) External id that encloses the runtime call; else the innermost cpu_op enclosing the
// runtime call (External ids repeat across sessions and some producers reuse them, so an id match
// far from the launch is not trusted); with no runtime call known, the op or user annotation
// carrying its External id.
void Trace::LinkDeviceActivity(int threads) {
  const auto n = static_cast<uint32_t>(slices_.size());
  storage_->links.clear();
  storage_->link_bits.assign((static_cast<size_t>(n) + 63) / 64, 0);
  storage_->link_rank.clear();
  const LinkKeys keys = CollectLinkKeys(slices_);
  // Which kinds get a link: device activity other than device annotations, looked up per slice
  // from a table rather than a call each.
  std::array<uint8_t, 256> linkable{};
  for (size_t k = 0; k < linkable.size(); ++k) {
    const auto kind = static_cast<ActivityKind>(k);
    linkable[k] = IsDeviceActivity(kind) && kind != ActivityKind::kDeviceAnnotation ? 1 : 0;
  }
  // Each slice's link depends on the slice and the keys alone: ranges of slices are linked
  // independently, then joined in slice order.
  struct Part {
    std::vector<DeviceLink> links;
    std::vector<uint32_t> linked;  // the slice of each link
    uint32_t op_links = 0;         // links that name an op
  };
  // Several ranges per thread, handed out one at a time, so a thread that shares its core (with
  // flow binding, or another process) takes fewer of them.
  const int parts = threads <= 1 ? 1 : PartsFor(4 * threads, n);
  std::vector<Part> out(static_cast<size_t>(parts));
  internal::ParallelFor(threads, static_cast<size_t>(parts), [&](size_t p) {
    const auto from = static_cast<uint32_t>(uint64_t{n} * p / static_cast<uint64_t>(parts));
    const auto to = static_cast<uint32_t>(uint64_t{n} * (p + 1) / static_cast<uint64_t>(parts));
    LinkFinder finder(slices_, keys);
    Part& o = out[p];
    size_t activities = 0;  // links at most: reserved once instead of grown by doubling
    for (uint32_t i = from; i < to; ++i) activities += linkable[KindIndex(slices_[i].kind)];
    internal::ReserveHuge(&o.links, activities);
    internal::ReserveHuge(&o.linked, activities);
    for (uint32_t i = from; i < to; ++i) {
      const Slice& s = slices_[i];
      if (!linkable[KindIndex(s.kind)]) continue;
      const DeviceLink link = finder.Find(s);
      if (link.op == kNone && link.runtime == kNone) continue;
      o.links.push_back(link);
      o.linked.push_back(i);
      if (link.op != kNone) ++o.op_links;
    }
  });
  std::vector<uint32_t> linked;
  uint32_t op_links = 0;
  if (parts == 1) {
    storage_->links = std::move(out[0].links);
    linked = std::move(out[0].linked);
    op_links = out[0].op_links;
  } else {
    for (Part& o : out) {
      storage_->links.insert(storage_->links.end(), o.links.begin(), o.links.end());
      linked.insert(linked.end(), o.linked.begin(), o.linked.end());
      op_links += o.op_links;
      o = Part();
    }
  }
  for (uint32_t i : linked) storage_->link_bits[i / 64] |= uint64_t{1} << (i % 64);
  IndexDeviceLinks(linked, op_links);
}

// The rank index over storage_->link_bits, and device activity per op as one index array in slice
// order (CSR): a few bytes per slice instead of a heap list per op. `linked`: the slice of each
// link; `op_links`: how many links name an op.
void Trace::IndexDeviceLinks(const std::vector<uint32_t>& linked, uint32_t op_links) {
  const auto n = static_cast<uint32_t>(slices_.size());
  storage_->link_rank.resize(storage_->link_bits.size());
  for (size_t w = 0, before = 0; w < storage_->link_bits.size(); ++w) {
    storage_->link_rank[w] = static_cast<uint32_t>(before);
    before += static_cast<size_t>(__builtin_popcountll(storage_->link_bits[w]));
  }
  storage_->device_activity_begin.clear();
  storage_->device_activity.clear();
  if (op_links == 0) return;
  internal::AssignHuge(&storage_->device_activity_begin, static_cast<size_t>(n) + 1, 0u);
  for (const DeviceLink& link : storage_->links) {
    if (link.op != kNone) ++storage_->device_activity_begin[link.op + 1];
  }
  for (uint32_t i = 0; i < n; ++i)
    storage_->device_activity_begin[i + 1] += storage_->device_activity_begin[i];
  storage_->device_activity.resize(op_links);
  std::vector<uint32_t> fill;
  internal::ReserveHuge(&fill, n);
  fill.assign(storage_->device_activity_begin.begin(), storage_->device_activity_begin.end() - 1);
  for (size_t k = 0; k < storage_->links.size(); ++k) {  // in slice order
    if (storage_->links[k].op != kNone)
      storage_->device_activity[fill[storage_->links[k].op]++] = linked[k];
  }
}

}  // namespace opscope
