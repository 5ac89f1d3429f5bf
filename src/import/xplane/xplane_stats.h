// XStats read the way the XPlane reader uses them: by name (through the plane's stat metadata),
// as integers or text (ref_value resolved to the string it names), and written out as an event's
// args object.
#ifndef OPSCOPE_IMPORT_XPLANE_XPLANE_STATS_H_
#define OPSCOPE_IMPORT_XPLANE_XPLANE_STATS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "import/xplane/xspace_decoder.h"

namespace opscope::import::xplane {

// The stat's name: its XStatMetadata's, or "stat_<id>" when the plane has none for it.
std::string StatName(const XPlane& plane, const XStat& stat);
// The first stat named `name` among `stats`, then `metadata_stats` (an event's own stats win over
// the ones its metadata gives every event), or null.
const XStat* FindStat(const XPlane& plane, std::span<const XStat> stats,
                      std::span<const XStat> metadata_stats, std::string_view name);
// An integer value (int64, uint64 within range, or a decimal string), else nullopt.
std::optional<int64_t> StatInt(const XStat& stat);
// A string value (str_value, or the name ref_value points at), else empty.
std::string_view StatText(const XPlane& plane, const XStat& stat);

// Extra fields written before the stats (e.g. the display name's long form, exact ps times).
struct ArgField {
  std::string_view key;
  std::string text;  // written as a string when `is_int` is false
  int64_t int_value = 0;
  bool is_int = false;
};

// The args object of an event: `fields`, then its stats and its metadata's (each name once, the
// event's own first). bytes_value stats are written as "<N bytes>". Returns "" when there is
// nothing to write.
std::string ArgsJson(const XPlane& plane, std::span<const ArgField> fields,
                     std::span<const XStat> stats, std::span<const XStat> metadata_stats);

}  // namespace opscope::import::xplane

#endif  // OPSCOPE_IMPORT_XPLANE_XPLANE_STATS_H_
