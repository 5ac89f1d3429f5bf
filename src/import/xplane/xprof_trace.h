// XProf's trace viewer JSON (*.trace.json.gz, what xprof and TensorBoard's profile plugin export
// from an XSpace, and what TraceLens's JAX report reads): Chrome trace events with
// "displayTimeUnit": "ns", a process per XPlane named like the plane ("/device:GPU:0",
// "/host:CPU"), a thread per line, no categories. The Kineto JSON reader reads it; its times are
// microseconds with fractions (picoseconds / 1e6), converted exactly (kineto/number_text.h).
// This gives its events the meaning the XPlane reader gives an XSpace's (xplane_translator.h).
#ifndef OPSCOPE_IMPORT_XPLANE_XPROF_TRACE_H_
#define OPSCOPE_IMPORT_XPLANE_XPROF_TRACE_H_

#include "opscope/trace.h"

namespace opscope::import {

// True for a trace read from XProf's JSON: its displayTimeUnit is "ns" and a process is named
// like a device plane ("/device:...").
bool LooksLikeXprofTrace(const Trace& trace);

// Before Finalize: on "/device:" processes, "Stream..." threads' events become kernels, memcpys
// and memsets (by name, as TraceLens's JAX report reads this JSON: copy* / memcpy* are memcpys,
// memset* memsets) on device stream tracks, linked by their correlation_id arg; "XLA Ops" (else
// "TensorFlow Ops" / "Framework Ops") and "XLA Modules" become the op level each activity is
// credited to by time; on a device with no stream threads (TPU) "XLA Ops" are the activity. Host
// events with a correlation_id arg become runtime calls, the others user annotations; the trace
// follows the XLA device timeline rule.
void ApplyXprofConventions(Trace* trace);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_XPLANE_XPROF_TRACE_H_
