// Turns what a recording collected into the trace model.
#ifndef OPSCOPE_SRC_PROFILER_TRACE_BUILDER_H_
#define OPSCOPE_SRC_PROFILER_TRACE_BUILDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "opscope/trace.h"
#include "trace/recorder.h"

namespace opscope::internal {

// One sample of a host counter series, in NowNs() time.
struct HostCounterSample {
  int64_t ns = 0;
  double value = 0;
};
struct HostCounterSeries {
  std::string name;
  std::vector<HostCounterSample> samples;
};

struct TraceBuildOptions {
  bool correlate_device_time = true;  // fit device clocks with the reported sync points
  bool record_shapes = false;
  bool with_flops = false;  // written as the trace's "with_flops" metadata
  std::vector<HostCounterSeries> counters;
  // Extra loss counts by reason (e.g. "in_flight_at_stop").
  std::vector<std::pair<std::string, uint64_t>> extra_dropped;
  std::string trace_name;
};

// Builds and finalizes a Trace:
//  - host process (this pid) with one thread track per recording thread;
//  - records -> kCpuOp / kUserAnnotation slices (External id = correlation), instants, counters;
//  - device activity: kHost clock -> slices on the host thread that made the call; kDevice
//    clock -> one process per device ("NEURON 0" labels, sort index 16777216 + device) and one
//    track per stream, times mapped with a ClockSync per device;
//  - ac2g flows from each runtime call to the kernel/memcpy/memset with its correlation;
//  - metadata: base time, device type, drop counts by reason, unmatched correlations.
Trace BuildTrace(Recording recording, TraceBuildOptions options);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_TRACE_BUILDER_H_
