// The XPlane reader: the pipeline that joins its stages.
//
//   bytes (ImportInput::ReadAll: a plain file mapped, gzip inflated)
//     -> XSpaceDecoder::ReadSpace: where each plane lies, the space's errors and hostnames
//     -> XSpaceDecoder::ReadPlane, every plane: metadata maps, stats, line headers
//        (the earliest line start becomes the trace's base time)
//     -> XSpaceTranslator::AddPlane, plane by plane, events one at a time (ForEachEvent)
//     -> Trace::Finalize: nesting, device activity linked to its launch and its op
//
// docs/formats.md says what is taken from each plane and line, and what is left.
#include "import/xplane/xplane_reader.h"

#include <algorithm>
#include <limits>
#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/varint.hpp>
#include <vector>

#include "import/import_log.h"
#include "import/xplane/xplane_translator.h"
#include "import/xplane/xspace_decoder.h"

namespace opscope::import {
namespace {

bool PlausiblePlaneName(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return name.front() == '/' || name.front() == '#' || name == "Task Environment" ||
         name == "Host CPUs" || name == "Syscalls";
}

}  // namespace

bool LooksLikeXSpace(std::string_view head) {
  const char* p = head.data();
  const char* end = head.data() + head.size();
  try {
    if (head.empty() || static_cast<unsigned char>(*p) != 0x0A) return false;  // field 1, bytes
    ++p;
    const uint64_t length = protozero::decode_varint(&p, end);
    const size_t inner =
        static_cast<size_t>(std::min<uint64_t>(length, static_cast<uint64_t>(end - p)));
    protozero::pbf_reader plane(p, inner);
    for (int fields = 0; fields < 2 && plane.next(); ++fields) {
      if (plane.tag_and_type() == protozero::tag_and_type(1, protozero::pbf_wire_type::varint)) {
        plane.skip();
        continue;
      }
      if (plane.tag_and_type() !=
          protozero::tag_and_type(2, protozero::pbf_wire_type::length_delimited)) {
        return false;
      }
      const protozero::data_view name = plane.get_view();
      return PlausiblePlaneName({name.data(), name.size()});
    }
  } catch (const protozero::exception&) {
  }
  return false;
}

Status ReadXPlane(ImportInput* in, Trace* out, ImportStats* stats, const ImportOptions& options) {
  ImportLog log(stats, options.max_warning_messages);
  stats->input_bytes = in->stored_bytes();
  auto finish = [&](Status st) {
    if (!st.ok()) log.Warn("the XSpace is incomplete: " + st.message(), false);
    out->metadata().skipped_events = stats->skipped;
    out->metadata().warnings = stats->warnings;
    out->Finalize(std::max(1, options.threads));
    return st;
  };
  std::string_view bytes;
  Status st = in->ReadAll(&bytes);
  if (!st.ok()) return finish(std::move(st));
  if (options.progress) options.progress(0, bytes.size());
  const xplane::XSpaceDecoder decoder(bytes);
  std::vector<xplane::XPlaneRef> refs;
  xplane::XSpaceInfo info;
  Status space = decoder.ReadSpace(&refs, &info);
  // Every plane's header first: the earliest line start is the trace's time 0.
  std::vector<xplane::XPlane> planes;
  planes.reserve(refs.size());
  // A plane that fails keeps the lines read before the failure; the planes after it are still
  // read (ReadSpace found where each lies). The first error is returned.
  for (const xplane::XPlaneRef& ref : refs) {
    xplane::XPlane plane;
    Status read = decoder.ReadPlane(ref, &plane);
    if (!read.ok() && st.ok()) st = std::move(read);
    planes.push_back(std::move(plane));
  }
  int64_t base_ns = std::numeric_limits<int64_t>::max();
  for (const xplane::XPlane& plane : planes) {
    for (const xplane::XLineHeader& line : plane.lines) {
      if (!line.message.empty()) base_ns = std::min(base_ns, line.timestamp_ns);
    }
  }
  xplane::XSpaceTranslator translator(decoder, out, options, &log);
  translator.SetBaseTime(base_ns == std::numeric_limits<int64_t>::max() ? 0 : base_ns);
  for (const xplane::XPlane& plane : planes) {
    Status added = translator.AddPlane(plane);
    if (!added.ok() && st.ok()) st = std::move(added);
    if (options.progress) options.progress(plane.offset, bytes.size());
  }
  translator.Finish(info);
  if (options.progress) options.progress(bytes.size(), bytes.size());
  return finish(!st.ok() ? std::move(st) : std::move(space));
}

}  // namespace opscope::import
