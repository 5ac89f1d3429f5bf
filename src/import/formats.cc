// The table of readers (formats.h) and detection over it.
#include "import/formats.h"

#include <array>

#include "import/kineto/kineto_reader.h"
#include "import/neuron/neuron_reader.h"
#include "import/neuron/torch_merge.h"
#include "import/nsys/nsys_reader.h"
#include "import/perfetto/perfetto_reader.h"
#include "import/xplane/xplane_reader.h"

namespace opscope::import {
namespace {

constexpr std::string_view kKinetoNames[] = {".json.gz", ".pt.trace.json", ".trace.json"};
constexpr std::string_view kXPlaneNames[] = {".xplane.pb", ".xplane.pb.gz"};
constexpr std::string_view kNeuronJsonNames[] = {"system_profile.json"};
constexpr std::string_view kPerfettoNames[] = {".pftrace", ".perfetto-trace", ".pftrace.gz",
                                               ".perfetto-trace.gz"};

// Stricter detection first: an XSpace opens with a plane named like a device or host, which a
// Perfetto TracePacket (also field 1, bytes) does not.
constexpr std::array kReaders = {
    FormatReader{TraceFormat::kXPlane, "xplane",
                 "XLA XPlane (an XSpace protobuf, *.xplane.pb, as JAX / TensorFlow write it)",
                 &LooksLikeXSpace, kXPlaneNames, nullptr, &ReadXPlane},
    FormatReader{TraceFormat::kNsysSqlite,
                 "nsys-sqlite",
                 "Nsight Systems SQLite export (nsys export --type sqlite)",
                 &LooksLikeNsysSqlite,
                 {},
                 nullptr,
                 &ReadNsysSqlite},
    FormatReader{TraceFormat::kPerfetto, "perfetto",
                 "Perfetto protobuf trace (TracePacket stream: .pftrace, .perfetto-trace, plain or "
                 "gzip)",
                 &LooksLikePerfetto, kPerfettoNames, nullptr, &ReadPerfetto},
    // Before the Neuron Explorer row: a profile folder that also holds the torch trace of its run
    // is the two merged.
    FormatReader{TraceFormat::kTorchNeuron,
                 "torch-neuron",
                 "a torch.profiler trace beside the Neuron Explorer profile of the same run (a "
                 "folder holding one of each)",
                 nullptr,
                 {},
                 &neuron::IsTorchNeuronDir,
                 &neuron::ReadTorchNeuron},
    FormatReader{TraceFormat::kNeuronExplorer,
                 "neuron-explorer",
                 "Neuron Explorer output directory (Parquet tables, with a Metadata or "
                 "SystemProfileMetadata table)",
                 nullptr,
                 {},
                 &neuron::IsNeuronExplorerDir,
                 &neuron::ReadNeuronExplorer},
    // Before Kineto JSON, which claims any JSON object naming "traceEvents": this row claims only
    // objects whose top-level keys are the legacy Neuron JSON's (and never one with traceEvents).
    FormatReader{TraceFormat::kNeuronJson, "neuron-json",
                 "Neuron profiler JSON (a device profile {\"summary\", \"instruction\"}, or "
                 "system_profile.json with its device_profile_model_<id>.json files, or their "
                 "folder)",
                 &neuron::LooksLikeNeuronJson, kNeuronJsonNames, &neuron::IsNeuronJsonDir,
                 &neuron::ReadNeuronJson},
    FormatReader{TraceFormat::kKinetoJson, "kineto-json",
                 "torch.profiler / Kineto / Chrome trace JSON (a traceEvents object or an event "
                 "array, plain or gzip)",
                 &LooksLikeKinetoJson, kKinetoNames, nullptr, &ReadKinetoJson},
};

}  // namespace

std::span<const FormatReader> FormatReaders() { return kReaders; }

const FormatReader* FindReader(TraceFormat format) {
  for (const FormatReader& r : kReaders) {
    if (r.format == format) return &r;
  }
  return nullptr;
}

const FormatReader* DetectFile(std::string_view head) {
  for (const FormatReader& r : kReaders) {
    if (r.detect_head != nullptr && r.detect_head(head)) return &r;
  }
  return nullptr;
}

const FormatReader* DetectDirectory(const std::string& path) {
  for (const FormatReader& r : kReaders) {
    if (r.detect_directory != nullptr && r.detect_directory(path)) return &r;
  }
  return nullptr;
}

bool NamedLikeProfile(std::string_view file_name) {
  for (const FormatReader& r : kReaders) {
    for (std::string_view suffix : r.name_suffixes) {
      if (file_name.size() >= suffix.size() &&
          file_name.substr(file_name.size() - suffix.size()) == suffix) {
        return true;
      }
    }
  }
  return false;
}

std::string TriedFormats(bool directory) {
  std::string out;
  for (const FormatReader& r : kReaders) {
    if (directory ? r.detect_directory == nullptr : r.detect_head == nullptr) continue;
    if (!out.empty()) out += "; ";
    out += r.description;
  }
  return out.empty() ? "none" : out;
}

}  // namespace opscope::import

namespace opscope {

std::string_view TraceFormatName(TraceFormat format) {
  const import::FormatReader* r = import::FindReader(format);
  return r != nullptr ? r->name : "unknown";
}

}  // namespace opscope
