// The XSpace wire format (XLA's xplane.proto: XSpace > XPlane > XLine > XEvent, with event and
// stat metadata per plane) decoded with protozero, field by field, into views of the input. No
// generated code: the field numbers below are xplane.proto's.
//
// Decoding is lazy where it pays: a plane's metadata maps and line headers are read whole
// (ReadPlane), a line's events one at a time (ForEachEvent), so an XSpace of millions of events
// holds one event's stats at a time. Every error names where it happened: the byte offset of the
// message or field in the input, and the plane, line and event index.
//
// Thread safety: a decoder is used by one thread; the views it hands out point into the input,
// which must outlive them.
#ifndef OPSCOPE_IMPORT_XPLANE_XSPACE_DECODER_H_
#define OPSCOPE_IMPORT_XPLANE_XSPACE_DECODER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opscope/status.h"

namespace opscope::import::xplane {

// One XStat: a metadata id and a value of one of the oneof's types.
struct XStat {
  enum class Type : uint8_t { kNone, kDouble, kUint64, kInt64, kString, kBytes, kRef };
  int64_t metadata_id = 0;
  Type type = Type::kNone;
  double double_value = 0;
  uint64_t uint_value = 0;  // uint64_value, or ref_value (an XStatMetadata id naming the string)
  int64_t int_value = 0;
  std::string_view text;  // str_value or bytes_value
};

// XEventMetadata: what every event with this metadata id shares.
struct XEventMetadata {
  std::string_view name;
  std::string_view display_name;
  std::vector<XStat> stats;
};

// An XLine without its events; `message` is the whole XLine, for ForEachEvent.
struct XLineHeader {
  int64_t id = 0;
  int64_t display_id = 0;
  std::string_view name;
  std::string_view display_name;
  int64_t timestamp_ns = 0;  // the line's start, ns since the UNIX epoch
  int64_t duration_ps = 0;
  std::string_view message;
  uint64_t offset = 0;  // byte offset of `message` in the input
  uint32_t index = 0;   // the line's index in its plane
};

// One XEvent, as ForEachEvent hands it over (valid during the call).
struct XEvent {
  int64_t metadata_id = 0;
  bool has_offset = false;  // offset_ps was set (else the event is an aggregate)
  int64_t offset_ps = 0;    // start, ps after the line's timestamp_ns
  int64_t num_occurrences = 0;
  int64_t duration_ps = 0;
  std::vector<XStat> stats;
  uint64_t offset = 0;  // byte offset of the event's message in the input
  uint64_t index = 0;   // the event's index in its line
};

// An XPlane's header: everything but the events.
struct XPlane {
  int64_t id = 0;
  std::string_view name;
  std::vector<XLineHeader> lines;
  std::unordered_map<int64_t, XEventMetadata> event_metadata;
  std::unordered_map<int64_t, std::string_view> stat_names;  // XStatMetadata id -> name
  std::vector<XStat> stats;                                  // plane-level stats
  uint64_t offset = 0;  // byte offset of the XPlane message in the input
  uint32_t index = 0;   // the plane's index in the XSpace
};

// Where a plane's message lies.
struct XPlaneRef {
  std::string_view message;
  uint64_t offset = 0;
  uint32_t index = 0;
  bool cut = false;  // the message runs past the input's end: `message` is what there is
};

// XSpace's own fields besides the planes.
struct XSpaceInfo {
  std::vector<std::string_view> errors;
  std::vector<std::string_view> warnings;
  std::vector<std::string_view> hostnames;
};

class XSpaceDecoder {
 public:
  // `bytes` (a whole serialized XSpace) must outlive the decoder and what it returns.
  explicit XSpaceDecoder(std::string_view bytes) : bytes_(bytes) {}

  // The top level: where each plane is, and the space's errors, warnings and hostnames. On an
  // error, `planes` holds the planes before it, and a plane cut short by the end of the input
  // (its lines and events before the end are read; its metadata, which XPlane writes after its
  // lines, may be missing).
  Status ReadSpace(std::vector<XPlaneRef>* planes, XSpaceInfo* info) const;
  // A plane's header: id, name, metadata maps, stats and line headers.
  Status ReadPlane(const XPlaneRef& ref, XPlane* out) const;
  // Calls `on_event` with each event of `line`, in order; stops at the first malformed event (the
  // events before it were handed over) or when `on_event` returns false.
  Status ForEachEvent(const XPlane& plane, const XLineHeader& line,
                      const std::function<bool(const XEvent&)>& on_event) const;

 private:
  uint64_t OffsetOf(const char* p) const { return static_cast<uint64_t>(p - bytes_.data()); }

  std::string_view bytes_;
};

}  // namespace opscope::import::xplane

#endif  // OPSCOPE_IMPORT_XPLANE_XSPACE_DECODER_H_
