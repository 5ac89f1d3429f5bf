// The Neuron profile readers' entry points, for the table of formats (formats.cc): Neuron
// Explorer's output directory of Parquet tables, the profiler's legacy JSON (a device profile, or
// profiler 2.x's system_profile.json with its device_profile_model_<id>.json files), and a folder
// holding a torch.profiler trace beside the Neuron profile of the same run. docs/neuron-profiles.md
// says what each takes from its files and how it lands in the trace model.
#ifndef OPSCOPE_IMPORT_NEURON_NEURON_READER_H_
#define OPSCOPE_IMPORT_NEURON_NEURON_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import::neuron {

// A folder holding a Metadata or SystemProfileMetadata table.
bool IsNeuronExplorerDir(const std::string& path);
Status ReadNeuronExplorer(ImportInput* in, Trace* out, ImportStats* stats,
                          const ImportOptions& options);

// The instances (hosts) a several-host system profile holds, sorted, "" left out: the parts
// ImportOptions::part selects, one a rank of a job (ListTraceParts). Empty for a profile that
// names no instance or is not a system profile.
Status ListNeuronExplorerParts(const std::string& path, std::vector<std::string>* parts);
Status ListNeuronJsonParts(const std::string& path, std::vector<std::string>* parts);

// The legacy JSON (legacy_json.h): a file whose top-level keys are a device profile's or a system
// profile's; a folder holding system_profile.json or device_profile_model_<id>.json files.
bool LooksLikeNeuronJson(std::string_view head);
bool IsNeuronJsonDir(const std::string& path);
Status ReadNeuronJson(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_NEURON_READER_H_
