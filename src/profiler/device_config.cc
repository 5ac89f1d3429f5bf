// DeviceConfig, ParseCoreList and Schedule.
#include <algorithm>
#include <charconv>

#include "opscope/profiler.h"

namespace opscope {

std::vector<int> ParseCoreList(std::string_view spec) {
  std::vector<int> cores;
  auto error = [&](size_t pos, const std::string& what) {
    return ProfilerError("capture_enabled_for_nc \"" + std::string(spec) + "\": " + what +
                         " at position " + std::to_string(pos) +
                         " (expected comma-separated core indices or ranges, e.g. \"0,1,2-5\")");
  };
  auto parse_int = [&](size_t& pos) {
    while (pos < spec.size() && spec[pos] == ' ') ++pos;
    int value = 0;
    auto [end, ec] = std::from_chars(spec.data() + pos, spec.data() + spec.size(), value);
    if (ec != std::errc() || value < 0) throw error(pos, "expected a core index");
    pos = static_cast<size_t>(end - spec.data());
    while (pos < spec.size() && spec[pos] == ' ') ++pos;
    return value;
  };
  size_t pos = 0;
  if (spec.find_first_not_of(' ') == std::string_view::npos) return cores;
  while (true) {
    size_t item_start = pos;
    int first = parse_int(pos);
    int last = first;
    if (pos < spec.size() && spec[pos] == '-') {
      ++pos;
      last = parse_int(pos);
      if (last < first) throw error(item_start, "range end is below its start");
    }
    if (last - first > 65535) throw error(item_start, "range too large");
    for (int c = first; c <= last; ++c) cores.push_back(c);
    if (pos == spec.size()) break;
    if (spec[pos] != ',') throw error(pos, std::string("unexpected '") + spec[pos] + "'");
    ++pos;
  }
  std::sort(cores.begin(), cores.end());
  cores.erase(std::unique(cores.begin(), cores.end()), cores.end());
  return cores;
}

bool DeviceConfig::HasMode(ProfileMode mode) const {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

bool DeviceConfig::CaptureEnabledFor(int core) const {
  std::string_view spec = capture_enabled_for_nc;
  if (spec.find_first_not_of(' ') == std::string_view::npos) return true;
  const char* p = spec.data();
  const char* end = p + spec.size();
  auto skip_spaces = [&] {
    while (p < end && *p == ' ') ++p;
  };
  auto number = [&](int* v) {
    skip_spaces();
    auto [next, ec] = std::from_chars(p, end, *v);
    if (ec != std::errc()) return false;
    p = next;
    skip_spaces();
    return true;
  };
  while (p < end) {
    int first = 0, last = 0;
    if (!number(&first)) return true;  // malformed: Start() reports it
    last = first;
    if (p < end && *p == '-') {
      ++p;
      if (!number(&last)) return true;
    }
    if (core >= first && core <= last) return true;
    if (p < end && *p != ',') return true;
    if (p < end) ++p;
  }
  return false;
}

Schedule::Action Schedule::At(int64_t step) const {
  if (step < skip_first) return Action::kNone;
  step -= skip_first;
  const int64_t cycle = int64_t{wait} + warmup + active;
  if (cycle <= 0) return Action::kNone;
  if (repeat > 0 && step / cycle >= repeat) return Action::kNone;
  const int64_t mod = step % cycle;
  if (mod < wait) return Action::kNone;
  if (mod < wait + warmup) return Action::kWarmup;
  return mod < cycle - 1 ? Action::kRecord : Action::kRecordAndSave;
}

}  // namespace opscope
