// The import's public entry points: open the input once, detect its format by content, hand it to
// that format's reader (formats.h), and turn running out of memory into an error.
#include "opscope/import.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <system_error>

#include "import/byte_source.h"
#include "import/formats.h"
#include "import/import_input.h"
#include "import/kineto/kineto_reader.h"
#include "import/neuron/neuron_reader.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using import::FormatReader;
using import::ImportInput;

// Runs `reader` on `in` into `out`. Running out of memory is an error that says how far the import
// got (the partial trace is dropped), not an exception.
Status RunReader(const FormatReader& reader, ImportInput* in, Trace* out, ImportStats* stats,
                 const ImportOptions& options) {
  ImportStats local;
  ImportStats* s = stats ? stats : &local;
  *s = ImportStats{};
  s->format = reader.format;
  *out = Trace();
  try {
    return reader.read(in, out, s, options);
  } catch (const std::bad_alloc&) {
    *out = Trace();
    return Status::Unavailable("out of memory after reading " + std::to_string(s->events) +
                               " events (" + std::string(reader.name) +
                               "): the trace does not fit in this machine's memory");
  }
}

// The reader for a file's content: the format that claims its head, else the JSON reader when the
// content opens a JSON value (its error then says what is wrong), else none.
const FormatReader* ReaderForHead(std::string_view head) {
  if (const FormatReader* r = import::DetectFile(head)) return r;
  if (import::LooksLikeJson(head)) return import::FindReader(TraceFormat::kKinetoJson);
  return nullptr;
}

Status UnknownFormat(const std::string& where, bool directory) {
  if (directory) {
    return Status::InvalidInput(
        "is a folder, not a profile: give a profile file, or a folder that is one profile (" +
            import::TriedFormats(true) + ")",
        0, where);
  }
  return Status::InvalidInput("not a profile opscope reads; tried: " + import::TriedFormats(false),
                              0, where);
}

Status ImportDirectory(const std::string& path, Trace* out, ImportStats* stats,
                       const ImportOptions& options) {
  const FormatReader* reader = import::DetectDirectory(path);
  if (reader == nullptr) {
    *out = Trace();
    out->Finalize();
    return std::move(UnknownFormat(path, true)).InFile(path);
  }
  std::unique_ptr<ImportInput> in = ImportInput::OpenDirectory(path);
  return RunReader(*reader, in.get(), out, stats, options).InFile(path);
}

}  // namespace

Status ImportTrace(const std::string& path, Trace* out, ImportStats* stats,
                   const ImportOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return ImportDirectory(path, out, stats, options);
  std::unique_ptr<ImportInput> in;
  Status st = ImportInput::OpenFile(path, &in, options.pipe_writer_wait_ms);
  if (!st.ok()) {
    *out = Trace();
    out->Finalize();
    return st;  // names the file
  }
  const FormatReader* reader = ReaderForHead(in->head());
  if (reader == nullptr) {
    *out = Trace();
    out->Finalize();
    return std::move(UnknownFormat(path, false)).InFile(path);
  }
  return RunReader(*reader, in.get(), out, stats, options).InFile(path);
}

Status ImportTraceFromMemory(std::string_view data, Trace* out, ImportStats* stats,
                             const ImportOptions& options) {
  std::unique_ptr<ImportInput> in = ImportInput::OpenMemory(data);
  const FormatReader* reader = ReaderForHead(in->head());
  if (reader == nullptr) {
    // Empty input, or bytes no reader claims: the JSON reader's error says what it expected.
    reader = import::FindReader(TraceFormat::kKinetoJson);
  }
  return RunReader(*reader, in.get(), out, stats, options);
}

TraceFormat DetectTraceFormat(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const FormatReader* r = import::DetectDirectory(path);
    return r != nullptr ? r->format : TraceFormat::kUnknown;
  }
  // The head is read a step at a time, so that a folder scan of many large traces reads (and
  // inflates) a few KiB of each rather than ImportInput::kHeadBytes.
  std::unique_ptr<import::ByteSource> source;
  if (!import::OpenFileSource(path, &source).ok()) return TraceFormat::kUnknown;
  std::string head;
  for (size_t step = size_t{16} << 10; head.size() < ImportInput::kHeadBytes; step *= 2) {
    const size_t before = head.size();
    head.resize(std::min(before + step, ImportInput::kHeadBytes));
    size_t have = before;
    while (have < head.size()) {
      size_t n = 0;
      if (!source->Read(head.data() + have, head.size() - have, &n).ok() || n == 0) break;
      have += n;
    }
    head.resize(have);
    const TraceFormat format = DetectTraceFormatFromMemory(head);
    if (format != TraceFormat::kUnknown || have < before + step) return format;
  }
  return TraceFormat::kUnknown;
}

TraceFormat DetectTraceFormatFromMemory(std::string_view head) {
  const FormatReader* r = import::DetectFile(head);
  return r != nullptr ? r->format : TraceFormat::kUnknown;
}

Status FindTraces(const std::string& path, std::vector<std::string>* traces) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound(path + ": no such file or directory", path);
  // A named pipe (`opscope explore <(zcat trace.json.gz)`) is read as the stream it is.
  if (fs::is_regular_file(st) || fs::is_fifo(st)) {
    traces->push_back(path);
    return Status::Ok();
  }
  if (!fs::is_directory(st)) {
    return Status::NotFound(path + ": not a profile file or a folder of profiles", path);
  }
  if (import::DetectDirectory(path) != nullptr) {
    traces->push_back(path);
    return Status::Ok();
  }
  std::vector<std::string> found;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) break;
    if (it->is_directory(ec)) {
      if (import::DetectDirectory(it->path().string()) != nullptr) {
        found.push_back(it->path().string());
        it.disable_recursion_pending();
      }
    } else if (it->is_regular_file(ec)
                   ? import::NamedLikeProfile(it->path().filename().string()) ||
                         DetectTraceFormat(it->path().string()) != TraceFormat::kUnknown
                   : import::NamedLikeProfile(it->path().filename().string()) ||
                         it->path().filename().string().find(".json") != std::string::npos) {
      // Named like a profile but not a file (a symlink loop, a device): listed too, so that its
      // import names it and says why instead of the folder's profiles leaving it out unsaid.
      found.push_back(it->path().string());
    }
    ec.clear();
  }
  if (found.empty()) {
    return Status::NotFound(
        path + ": no profiles in this folder; looked for files in these formats: " +
            import::TriedFormats(false) + "; and folders in these: " + import::TriedFormats(true),
        path);
  }
  std::sort(found.begin(), found.end());
  traces->insert(traces->end(), found.begin(), found.end());
  return Status::Ok();
}

Status ListTraceParts(const std::string& path, std::vector<std::string>* parts) {
  parts->clear();
  std::error_code ec;
  const fs::file_status kind = fs::status(path, ec);
  // A named pipe is read once, by its import: never looked into here.
  if (ec || (!fs::is_regular_file(kind) && !fs::is_directory(kind))) return Status::Ok();
  Status st;
  switch (DetectTraceFormat(path)) {
    case TraceFormat::kNeuronExplorer:
      st = import::neuron::ListNeuronExplorerParts(path, parts);
      break;
    case TraceFormat::kNeuronJson:
      st = import::neuron::ListNeuronJsonParts(path, parts);
      break;
    default:
      break;
  }
  if (parts->size() < 2) parts->clear();  // one host is one trace
  return st;
}

}  // namespace opscope
