// Reading a rank's collectives out of its trace: PyTorch's collective args and the names NCCL
// kernels carry.
#ifndef OPSCOPE_SRC_JOB_COLLECTIVE_ARGS_H_
#define OPSCOPE_SRC_JOB_COLLECTIVE_ARGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/job.h"
#include "opscope/trace.h"

namespace opscope::job {

// Bytes per element of a PyTorch dtype as the profiler writes it ("Float", "BFloat16"); 0 when
// unknown.
int DtypeBytes(std::string_view dtype);

// The collective's kind for NCCL's bus-bandwidth factor, from a "Collective name" arg or a kernel
// name: "allreduce", "allgather", "reducescatter", "alltoall", "alltoallv", "broadcast",
// "reduce", "sendrecv", or "" when not recognised.
std::string CollectiveKind(std::string_view name);

// NCCL's bus-bandwidth factor for `kind` over n ranks (nccl-tests doc/PERFORMANCE.md); < 0 when
// the kind has none (all_to_allv moves different sizes per rank; unknown kinds).
double BusBandwidthFactor(std::string_view kind, int64_t n);

// Every communication kernel of `trace` (analysis::IsCommunication) as a record with its args,
// in start order. `base_ns` is added to every time. compute_before_ns is left 0.
std::vector<CollectiveRecord> ExtractCollectives(const Trace& trace);

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_COLLECTIVE_ARGS_H_
