// What an event's category ("cat") says: the kind of activity, and which device family wrote the
// trace (Kineto names categories per backend: "cuda_runtime", "mtia_ccp_events", ...).
#ifndef OPSCOPE_IMPORT_KINETO_EVENT_CATEGORY_H_
#define OPSCOPE_IMPORT_KINETO_EVENT_CATEGORY_H_

#include <string>
#include <string_view>
#include <utility>

#include "opscope/trace.h"

namespace opscope::import {

// The ActivityKind of a category (kOther for categories the model does not distinguish).
ActivityKind KindFromCategory(std::string_view cat);

// The device family, from the categories seen and what the document says of itself.
class DeviceFamily {
 public:
  // Notes one distinct category.
  void NoteCategory(std::string_view cat);
  // A top-level "deviceType" / "device_type" value (wins over everything else).
  void SetHint(std::string hint) { hint_ = std::move(hint); }
  // Whether the top-level "deviceProperties" holds an object (Kineto writes one per CUDA device).
  void SetHasDeviceProperties(bool has) { device_properties_ = has; }

  // TraceMetadata::device_type: the hint; else MTIA, XPU, PRIVATEUSE1 (NEURON when a process
  // name or label says "neuron"), CUDA from their categories; else "".
  std::string DeviceType(const Trace& trace) const;

 private:
  std::string hint_;
  bool device_properties_ = false;
  bool cuda_ = false, mtia_ = false, xpu_ = false, privateuse1_ = false;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_EVENT_CATEGORY_H_
