// An XSpace's planes turned into the trace model, one plane at a time (docs/formats.md, "XPlane"):
//
//   device plane ("/device:GPU:N", "/device:TPU:N", "/device:CUSTOM:...")  -> a device process
//     "Stream #..." lines (GPU)           -> device streams: kernel / memcpy / memset by the
//                                            event's stats (memcpy_details, Memset_details) or name
//     "XLA Ops" (else "TensorFlow Ops" / "Framework Ops") and "XLA Modules"
//                                         -> one op-level track of cpu_op slices, modules enclosing
//                                            their ops; each device activity carries the External
//                                            id of the op (else module) that encloses it in time
//     on a plane with no stream lines (TPU): "XLA Ops" are the device's activity (kernels) and
//                                            "XLA Modules" the op level
//     any other line ("Steps", name scopes, ...) -> a track of slices of kind kOther
//   host plane ("/host:CPU", "/host:CUPTI", ...) -> a host process, one thread track per line:
//     events carrying correlation_id      -> runtime calls (the launches device activity links to)
//     "/host:python-tracer" events        -> python functions; all others user annotations
//
// Times: an event starts at its line's timestamp_ns plus offset_ps. Both ends are rounded to the
// nearest ns (half up) separately, with integer arithmetic only, so events that touch still touch;
// an event whose ends are not whole ns keeps its exact offset_ps and duration_ps in its args.
//
// Not thread-safe; the decoder's input must outlive the translator.
#ifndef OPSCOPE_IMPORT_XPLANE_XPLANE_TRANSLATOR_H_
#define OPSCOPE_IMPORT_XPLANE_XPLANE_TRANSLATOR_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import/import_log.h"
#include "import/xplane/op_index.h"
#include "import/xplane/xspace_decoder.h"
#include "opscope/import.h"
#include "opscope/trace.h"

namespace opscope::import::xplane {

class XSpaceTranslator {
 public:
  XSpaceTranslator(const XSpaceDecoder& decoder, Trace* trace, const ImportOptions& options,
                   ImportLog* log)
      : decoder_(decoder), trace_(trace), options_(options), log_(log) {}

  // The epoch ns that becomes time 0 (the earliest line start); before AddPlane.
  void SetBaseTime(int64_t base_ns);
  // Reads one plane's events into the trace. On a malformed event the events before it stay and
  // the error names the plane, line, event and byte.
  Status AddPlane(const XPlane& plane);
  // Metadata (device type, deviceProperties, the space's errors and hostnames) into the trace.
  void Finish(const XSpaceInfo& info);

 private:
  enum class Role : uint8_t { kHostThread, kStream, kOps, kModules, kOther };
  struct LinePlan {
    Role role;
    uint32_t track;
  };

  std::vector<LinePlan> PlanLines(const XPlane& plane, uint32_t process);
  Status AddLine(const XPlane& plane, const XLineHeader& line, const LinePlan& plan,
                 OpIndex* index);
  void ClassifyEvent(const XPlane& plane, const XEvent& e, std::span<const XStat> md_stats,
                     std::string_view name, std::string_view raw_name, const LinePlan& plan,
                     OpIndex* index, Slice* s);
  bool KeepArgs(ActivityKind kind, StringId name);
  void NoteDeviceProperties(const XPlane& plane);

  const XSpaceDecoder& decoder_;
  Trace* trace_;
  const ImportOptions& options_;
  ImportLog* log_;
  int64_t base_ns_ = 0;
  int64_t next_external_id_ = 1;
  std::map<std::pair<uint8_t, StringId>, bool> keep_args_;  // options_.keep_args_of, asked once
  std::vector<std::string> device_properties_;              // one JSON object per device plane
  std::string device_type_;
  uint64_t aggregates_ = 0;  // events without a time (num_occurrences), left out
  bool with_flops_ = false;  // an op carries a "flops" stat
};

}  // namespace opscope::import::xplane

#endif  // OPSCOPE_IMPORT_XPLANE_XPLANE_TRANSLATOR_H_
