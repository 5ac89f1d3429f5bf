// The XPlane reader: XLA's profile format (*.xplane.pb, an XSpace protobuf), as JAX, TensorFlow and
// XLA write it on GPU, TPU and other devices (xplane_reader.cc draws the pipeline).
#ifndef OPSCOPE_IMPORT_XPLANE_XPLANE_READER_H_
#define OPSCOPE_IMPORT_XPLANE_XPLANE_READER_H_

#include <string_view>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import {

// True when `head` (the first bytes) opens an XSpace: its first field is a plane (field 1) whose
// own first fields are an id and a printable name such as "/host:CPU" or "/device:GPU:0". The
// plane's length is not checked against the head (a large plane runs past it).
bool LooksLikeXSpace(std::string_view head);

// Reads `in` (read whole: a file is mapped) into the empty trace `out`, which is finalized
// whatever happens.
Status ReadXPlane(ImportInput* in, Trace* out, ImportStats* stats, const ImportOptions& options);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_XPLANE_XPLANE_READER_H_
