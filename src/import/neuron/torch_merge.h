// A folder holding a torch.profiler trace (Kineto JSON, as torch-neuronx writes it with the Neuron
// profiler on) beside the Neuron profile of the same run (a Neuron Explorer output directory),
// opened as one trace: framework ops from the PyTorch trace, runtime calls and device activity from
// the Neuron profile, each runtime call and execution linked to the framework op that made it.
// docs/neuron-profiles.md ("A torch.profiler trace with its Neuron profile") states the rules:
// which folders qualify, how the clocks are aligned, how ops are linked (by id, else by time), and
// what happens to the torch trace's own runtime calls and device events.
//
// Neither reader changes: each reads its part into a trace of its own, and the merge copies both
// into the output (torch_merge.cc) and links them (torch_link.cc).
#ifndef OPSCOPE_IMPORT_NEURON_TORCH_MERGE_H_
#define OPSCOPE_IMPORT_NEURON_TORCH_MERGE_H_

#include <string>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import::neuron {

// What a combined folder holds: one torch.profiler trace and one Neuron Explorer profile.
struct TorchNeuronParts {
  std::string torch_trace;     // a file directly in the folder, read as Kineto JSON
  std::string neuron_profile;  // the folder itself, or its one sub-folder that is a profile
};

// True when `path` holds exactly one torch.profiler trace (a "*.json" / "*.json.gz" file directly
// in it whose content is Kineto JSON) and one Neuron Explorer profile (the folder itself, or
// exactly one of its direct sub-folders). A folder of several torch traces is not one (it stays a
// job).
bool FindTorchNeuronParts(const std::string& path, TorchNeuronParts* parts);
bool IsTorchNeuronDir(const std::string& path);

// The merge ReadTorchNeuron runs once both parts are read, apart for tests and fuzzing: `torch`
// and `neuron` finalized, `out` empty; `out` is finalized on `threads` threads, its
// TraceMetadata::extra holding "neuronMerge" (the figures of the links, naming `parts`).
void MergeTorchNeuron(const Trace& torch, const Trace& neuron, const TorchNeuronParts& parts,
                      Trace* out, int threads = 1);

// Reads both parts and merges them into `out` (finalized whatever happens). The first error of
// either reader is returned, naming its file; what both read before it is kept and merged.
Status ReadTorchNeuron(ImportInput* in, Trace* out, ImportStats* stats,
                       const ImportOptions& options);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_TORCH_MERGE_H_
