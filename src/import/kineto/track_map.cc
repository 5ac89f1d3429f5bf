// Events' (pid, tid) to processes and tracks (see track_map.h).
#include "import/kineto/track_map.h"

#include "import/kineto/number_text.h"

namespace opscope::import {
namespace {

constexpr int64_t kSyntheticIdBase = int64_t{1} << 48;  // ids for string pids/tids

}  // namespace

int64_t TrackMap::SyntheticId(std::string_view text) {
  int64_t v = 0;
  if (ParseInt64(text, &v)) return v;
  auto it = synthetic_ids_.find(std::string(text));
  if (it != synthetic_ids_.end()) return it->second;
  int64_t id = kSyntheticIdBase + static_cast<int64_t>(synthetic_ids_.size());
  synthetic_ids_.emplace(std::string(text), id);
  return id;
}

uint32_t TrackMap::CounterTrack(uint32_t process, StringId series_id, std::string_view series) {
  auto [it, inserted] = counter_tracks_.try_emplace((uint64_t{process} << 32) | series_id, 0);
  if (inserted) {
    const int64_t tid = kSyntheticIdBase * 2 + static_cast<int64_t>(counter_tracks_.size());
    it->second = trace_->AddThreadTrack(process, tid, series, TrackKind::kCounter);
  }
  return it->second;
}

void TrackMap::MarkDevice(uint32_t track) {
  if (track < device_marked_.size() && device_marked_[track]) return;
  if (device_marked_.size() <= track) device_marked_.resize(track + 1, false);
  device_marked_[track] = true;
  Track& t = trace_->MutableTrack(track);
  if (t.kind == TrackKind::kThread) t.kind = TrackKind::kDeviceStream;
  trace_->MutableProcess(t.process).is_device = true;
}

}  // namespace opscope::import
