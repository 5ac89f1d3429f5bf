// XStat values by name and as args JSON (see xplane_stats.h).
#include "import/xplane/xplane_stats.h"

#include <charconv>
#include <limits>
#include <vector>

#include "base/json_writer.h"

namespace opscope::import::xplane {
namespace {

std::string_view NameView(const XPlane& plane, const XStat& stat) {
  auto it = plane.stat_names.find(stat.metadata_id);
  return it == plane.stat_names.end() ? std::string_view() : it->second;
}

void WriteValue(const XPlane& plane, const XStat& s, JsonWriter* w) {
  switch (s.type) {
    case XStat::Type::kDouble:
      w->Double(s.double_value);
      break;
    case XStat::Type::kUint64:
      w->Uint(s.uint_value);
      break;
    case XStat::Type::kInt64:
      w->Int(s.int_value);
      break;
    case XStat::Type::kString:
      w->String(s.text);
      break;
    case XStat::Type::kBytes:
      w->String("<" + std::to_string(s.text.size()) + " bytes>");
      break;
    case XStat::Type::kRef:
      w->String(StatText(plane, s));
      break;
    case XStat::Type::kNone:
      w->Null();
      break;
  }
}

}  // namespace

std::string StatName(const XPlane& plane, const XStat& stat) {
  const std::string_view name = NameView(plane, stat);
  return name.empty() ? "stat_" + std::to_string(stat.metadata_id) : std::string(name);
}

const XStat* FindStat(const XPlane& plane, std::span<const XStat> stats,
                      std::span<const XStat> metadata_stats, std::string_view name) {
  for (std::span<const XStat> list : {stats, metadata_stats}) {
    for (const XStat& s : list) {
      if (NameView(plane, s) == name) return &s;
    }
  }
  return nullptr;
}

std::optional<int64_t> StatInt(const XStat& stat) {
  switch (stat.type) {
    case XStat::Type::kInt64:
      return stat.int_value;
    case XStat::Type::kUint64:
      if (stat.uint_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) break;
      return static_cast<int64_t>(stat.uint_value);
    case XStat::Type::kString: {
      int64_t v = 0;
      const char* end = stat.text.data() + stat.text.size();
      const auto r = std::from_chars(stat.text.data(), end, v);
      if (r.ec == std::errc() && r.ptr == end) return v;
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

std::string_view StatText(const XPlane& plane, const XStat& stat) {
  if (stat.type == XStat::Type::kString) return stat.text;
  if (stat.type != XStat::Type::kRef) return {};
  if (stat.uint_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return {};
  auto it = plane.stat_names.find(static_cast<int64_t>(stat.uint_value));
  return it == plane.stat_names.end() ? std::string_view() : it->second;
}

std::string ArgsJson(const XPlane& plane, std::span<const ArgField> fields,
                     std::span<const XStat> stats, std::span<const XStat> metadata_stats) {
  if (fields.empty() && stats.empty() && metadata_stats.empty()) return {};
  JsonWriter w;
  w.BeginObject();
  std::vector<std::string> written;  // names so far: a name is written once
  written.reserve(fields.size() + stats.size() + metadata_stats.size());
  for (const ArgField& f : fields) {
    w.Key(f.key);
    if (f.is_int) {
      w.Int(f.int_value);
    } else {
      w.String(f.text);
    }
    written.emplace_back(f.key);
  }
  for (std::span<const XStat> list : {stats, metadata_stats}) {
    for (const XStat& s : list) {
      std::string name = StatName(plane, s);
      bool seen = false;
      for (const std::string& n : written) seen = seen || n == name;
      if (seen) continue;
      w.Key(name);
      WriteValue(plane, s, &w);
      written.push_back(std::move(name));
    }
  }
  w.EndObject();
  return w.Take();
}

}  // namespace opscope::import::xplane
