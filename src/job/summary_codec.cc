// Binary encoding of RankSummary lists, for gathering them from MPI processes.
//
// Layout: "OPSRS" and the format version as one ASCII digit (kFormatVersion), the summary count,
// then per summary: a string table (count, then length-prefixed strings) that
// every string field refers to by index, then the fields in declaration order. Integers are
// zigzag LEB128 varints; collective and step times are deltas (start from the previous start,
// end from the start), so a collective costs ~20 bytes instead of ~150.
//
// Versions: 1 had no collective `slice`; it was then added under the same tag "OPSRS1", so a
// version-1 stream has two possible layouts and is refused rather than guessed at. 2 adds the
// slice; 3 the summary's `part` (after `file`). Any change to the layout bumps kFormatVersion.
#include <fmt/format.h>

#include <unordered_map>

#include "opscope/job.h"

namespace opscope {
namespace {

constexpr std::string_view kMagic = "OPSRS";
constexpr int kFormatVersion = 3;

class Writer {
 public:
  void Int(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      out_ += static_cast<char>((z & 0x7f) | 0x80);
      z >>= 7;
    }
    out_ += static_cast<char>(z);
  }
  void Raw(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool Int(int64_t* v) {
    uint64_t z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return false;
      const auto byte = static_cast<uint8_t>(in_[pos_++]);
      z |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
        return true;
      }
    }
    return false;
  }
  bool Raw(std::string* s) {
    int64_t n;
    if (!Int(&n) || n < 0 || static_cast<uint64_t>(n) > in_.size() - pos_) return false;
    s->assign(in_.substr(pos_, static_cast<size_t>(n)));
    pos_ += static_cast<size_t>(n);
    return true;
  }
  // The header's format version (0-9), or -1 when the input does not start with the magic.
  int Version() {
    if (in_.size() < kMagic.size() + 1 || in_.substr(0, kMagic.size()) != kMagic) return -1;
    const char digit = in_[kMagic.size()];
    if (digit < '0' || digit > '9') return -1;
    pos_ = kMagic.size() + 1;
    return digit - '0';
  }
  bool done() const { return pos_ == in_.size(); }
  size_t pos() const { return pos_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

// Strings of one summary, each stored once.
struct StringTable {
  std::unordered_map<std::string_view, int64_t> index;
  std::vector<std::string_view> strings;
  int64_t Add(std::string_view s) {
    auto [it, added] = index.emplace(s, static_cast<int64_t>(strings.size()));
    if (added) strings.push_back(s);
    return it->second;
  }
};

constexpr int64_t DeviceTimeline::*kTimelineFields[] = {
    &DeviceTimeline::start_ns,        &DeviceTimeline::end_ns,
    &DeviceTimeline::total_ns,        &DeviceTimeline::busy_ns,
    &DeviceTimeline::idle_ns,         &DeviceTimeline::computation_ns,
    &DeviceTimeline::total_comm_ns,   &DeviceTimeline::exposed_comm_ns,
    &DeviceTimeline::total_memcpy_ns, &DeviceTimeline::exposed_memcpy_ns,
};

void Encode(const RankSummary& s, Writer& w) {
  StringTable t;
  t.Add(s.file);
  t.Add(s.part);
  t.Add(s.error);
  t.Add(s.device_type);
  for (const CollectiveRecord& c : s.collectives) {
    t.Add(c.group);
    t.Add(c.name);
    t.Add(c.kernel);
    t.Add(c.dtype);
  }
  for (const RankOpTime& op : s.ops) t.Add(op.name);
  w.Int(static_cast<int64_t>(t.strings.size()));
  for (std::string_view str : t.strings) w.Raw(str);
  w.Int(t.Add(s.file));
  w.Int(t.Add(s.part));
  w.Int(static_cast<int64_t>(s.file_bytes));
  w.Int(s.rank);
  w.Int(s.world_size);
  w.Int(s.rank_from_distributed_info);
  w.Int(t.Add(s.error));
  w.Int(static_cast<int64_t>(s.error_offset));
  w.Int(static_cast<int64_t>(s.skipped_events));
  w.Int(t.Add(s.device_type));
  w.Int(static_cast<int64_t>(s.slices));
  for (auto field : kTimelineFields) w.Int(s.timeline.*field);
  w.Int(static_cast<int64_t>(s.timeline.activities));
  w.Int(static_cast<int64_t>(s.timeline.unlinked_activities));
  w.Int(s.overlap_comm_ns);
  w.Int(s.overlap_ns);
  w.Int(static_cast<int64_t>(s.collectives.size()));
  int64_t previous = 0;
  for (const CollectiveRecord& c : s.collectives) {
    w.Int(t.Add(c.group));
    w.Int(c.seq);
    w.Int(t.Add(c.name));
    w.Int(t.Add(c.kernel));
    w.Int(t.Add(c.dtype));
    w.Int(c.in_nelems);
    w.Int(c.out_nelems);
    w.Int(c.group_size);
    w.Int(c.stream);
    w.Int(c.start_ns - previous);
    w.Int(c.end_ns - c.start_ns);
    w.Int(c.compute_before_ns);
    w.Int(c.slice == kNone ? -1 : static_cast<int64_t>(c.slice));
    previous = c.start_ns;
  }
  w.Int(static_cast<int64_t>(s.steps.size()));
  previous = 0;
  for (const StepRecord& step : s.steps) {
    w.Int(step.step);
    w.Int(step.start_ns - previous);
    w.Int(step.end_ns - step.start_ns);
    previous = step.start_ns;
  }
  w.Int(static_cast<int64_t>(s.ops.size()));
  for (const RankOpTime& op : s.ops) {
    w.Int(t.Add(op.name));
    w.Int(op.device_ns);
    w.Int(op.count);
  }
}

class Decoder {
 public:
  explicit Decoder(Reader& r) : r_(r) {}
  bool Summary(RankSummary* s);

 private:
  bool Int(int64_t* v) { return r_.Int(v); }
  template <typename T>
  bool As(T* out) {
    int64_t v;
    if (!r_.Int(&v)) return false;
    *out = static_cast<T>(v);
    return true;
  }
  bool Str(std::string* out) {
    int64_t i;
    if (!r_.Int(&i) || i < 0 || static_cast<size_t>(i) >= strings_.size()) return false;
    *out = strings_[static_cast<size_t>(i)];
    return true;
  }
  bool Count(size_t* n) {
    int64_t v;
    // Every element takes at least one byte, which bounds a corrupt count.
    if (!r_.Int(&v) || v < 0 || v > (1ll << 40)) return false;
    *n = static_cast<size_t>(v);
    return true;
  }
  bool Collective(int64_t* previous, CollectiveRecord* c);

  Reader& r_;
  std::vector<std::string> strings_;
};

bool Decoder::Collective(int64_t* previous, CollectiveRecord* c) {
  int64_t start_delta, dur, slice;
  if (!Str(&c->group) || !Int(&c->seq) || !Str(&c->name) || !Str(&c->kernel) || !Str(&c->dtype) ||
      !Int(&c->in_nelems) || !Int(&c->out_nelems) || !Int(&c->group_size) || !Int(&c->stream) ||
      !Int(&start_delta) || !Int(&dur) || !Int(&c->compute_before_ns) || !Int(&slice) ||
      slice < -1 || slice >= int64_t{kNone}) {
    return false;
  }
  c->slice = slice < 0 ? kNone : static_cast<uint32_t>(slice);
  c->start_ns = *previous + start_delta;
  c->end_ns = c->start_ns + dur;
  *previous = c->start_ns;
  return true;
}

bool Decoder::Summary(RankSummary* s) {
  size_t n;
  if (!Count(&n)) return false;
  strings_.assign(n, {});
  for (std::string& str : strings_) {
    if (!r_.Raw(&str)) return false;
  }
  if (!Str(&s->file) || !Str(&s->part) || !As(&s->file_bytes) || !As(&s->rank) ||
      !As(&s->world_size) || !As(&s->rank_from_distributed_info) || !Str(&s->error) ||
      !As(&s->error_offset) || !As(&s->skipped_events) || !Str(&s->device_type) ||
      !As(&s->slices)) {
    return false;
  }
  for (auto field : kTimelineFields) {
    if (!Int(&(s->timeline.*field))) return false;
  }
  if (!As(&s->timeline.activities) || !As(&s->timeline.unlinked_activities) ||
      !Int(&s->overlap_comm_ns) || !Int(&s->overlap_ns) || !Count(&n)) {
    return false;
  }
  s->collectives.resize(n);
  int64_t previous = 0;
  for (CollectiveRecord& c : s->collectives) {
    if (!Collective(&previous, &c)) return false;
  }
  if (!Count(&n)) return false;
  s->steps.resize(n);
  previous = 0;
  for (StepRecord& step : s->steps) {
    int64_t start_delta, dur;
    if (!Int(&step.step) || !Int(&start_delta) || !Int(&dur)) return false;
    step.start_ns = previous + start_delta;
    step.end_ns = step.start_ns + dur;
    previous = step.start_ns;
  }
  if (!Count(&n)) return false;
  s->ops.resize(n);
  for (RankOpTime& op : s->ops) {
    if (!Str(&op.name) || !Int(&op.device_ns) || !Int(&op.count)) return false;
  }
  return true;
}

}  // namespace

std::string SerializeRankSummaries(const std::vector<RankSummary>& summaries) {
  Writer w;
  w.out().append(kMagic);
  w.out() += static_cast<char>('0' + kFormatVersion);
  w.Int(static_cast<int64_t>(summaries.size()));
  for (const RankSummary& s : summaries) Encode(s, w);
  return std::move(w.out());
}

int RankSummaryFormatVersion() { return kFormatVersion; }

Status ParseRankSummaries(std::string_view bytes, std::vector<RankSummary>* summaries) {
  Reader r(bytes);
  const int version = r.Version();
  if (version >= 0 && version != kFormatVersion) {
    return Status::InvalidInput(
        fmt::format(
            "rank summaries in format version {} ({} opscope); this opscope reads version {} "
            "only: run the same opscope build in every process",
            version, version < kFormatVersion ? "written by an older" : "written by a newer",
            kFormatVersion),
        r.pos());
  }
  int64_t n;
  if (version < 0 || !r.Int(&n) || n < 0 || static_cast<uint64_t>(n) > bytes.size()) {
    return Status::InvalidInput("not an opscope rank summary stream (bad header)", r.pos());
  }
  Decoder d(r);
  for (int64_t i = 0; i < n; ++i) {
    RankSummary s;
    if (!d.Summary(&s)) {
      return Status::InvalidInput(
          fmt::format("rank summary {} of {} is malformed near byte {}", i + 1, n, r.pos()),
          r.pos());
    }
    summaries->push_back(std::move(s));
  }
  if (!r.done()) {
    return Status::InvalidInput(
        fmt::format("{} bytes left after the last rank summary", bytes.size() - r.pos()), r.pos());
  }
  return Status::Ok();
}

}  // namespace opscope
