// XSpace decoding with protozero (see xspace_decoder.h). Field numbers are xplane.proto's; a
// field of an unexpected wire type is skipped like an unknown one, never read as another type.
#include "import/xplane/xspace_decoder.h"

#include <fmt/format.h>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/varint.hpp>

namespace opscope::import::xplane {
namespace {

using protozero::pbf_reader;
using protozero::pbf_wire_type;
using protozero::tag_and_type;

constexpr uint32_t Varint(uint32_t tag) { return tag_and_type(tag, pbf_wire_type::varint); }
constexpr uint32_t Bytes(uint32_t tag) {
  return tag_and_type(tag, pbf_wire_type::length_delimited);
}
constexpr uint32_t Fixed64(uint32_t tag) { return tag_and_type(tag, pbf_wire_type::fixed64); }

std::string_view View(const protozero::data_view& v) { return {v.data(), v.size()}; }

// What went wrong, from protozero's exception.
std::string Describe(const protozero::exception& e) {
  if (dynamic_cast<const protozero::end_of_buffer_exception*>(&e) != nullptr) {
    return "a field runs past the end of its message (the file is cut short or corrupt)";
  }
  if (dynamic_cast<const protozero::varint_too_long_exception*>(&e) != nullptr) {
    return "a varint longer than 10 bytes";
  }
  if (dynamic_cast<const protozero::unknown_pbf_wire_type_exception*>(&e) != nullptr) {
    return "a field of an unknown wire type";
  }
  if (dynamic_cast<const protozero::invalid_tag_exception*>(&e) != nullptr) {
    return "an invalid field number (0 or reserved)";
  }
  if (dynamic_cast<const protozero::invalid_length_exception*>(&e) != nullptr) {
    return "an invalid length";
  }
  return e.what();
}

// Reads fields of one message, remembering where the last one began (for error offsets).
class FieldReader {
 public:
  FieldReader(std::string_view message, const char** at)
      : reader_(message.data(), message.size()), at_(at) {}
  bool Next() {
    *at_ = reader_.data().data();
    return reader_.next();
  }
  // The length-delimited field just reached by Next(): its bytes, or, when its length runs past
  // the end of the enclosing message, the bytes up to that end with *cut set (a file cut short:
  // what it holds is still read). After a cut the reader must not be used again.
  std::string_view TakeView(bool* cut) {
    const protozero::data_view rest = reader_.data();  // from the length varint on
    const char* p = rest.data();
    const char* end = rest.data() + rest.size();
    uint64_t length = 0;
    try {
      length = protozero::decode_varint(&p, end);
    } catch (const protozero::end_of_buffer_exception&) {  // the end falls inside the length
      *cut = true;
      return {};
    }
    if (length <= static_cast<uint64_t>(end - p)) return View(reader_.get_view());
    *cut = true;
    return {p, static_cast<size_t>(end - p)};
  }
  pbf_reader& operator*() { return reader_; }
  pbf_reader* operator->() { return &reader_; }

 private:
  pbf_reader reader_;
  const char** at_;
};

// An XStat message (field numbers: metadata_id 1, double 2, uint64 3, int64 4, str 5, bytes 6,
// ref 7).
XStat ReadStat(std::string_view message, const char** at) {
  XStat s;
  FieldReader f(message, at);
  while (f.Next()) {
    switch (f->tag_and_type()) {
      case Varint(1):
        s.metadata_id = f->get_int64();
        break;
      case Fixed64(2):
        s.type = XStat::Type::kDouble;
        s.double_value = f->get_double();
        break;
      case Varint(3):
        s.type = XStat::Type::kUint64;
        s.uint_value = f->get_uint64();
        break;
      case Varint(4):
        s.type = XStat::Type::kInt64;
        s.int_value = f->get_int64();
        break;
      case Bytes(5):
        s.type = XStat::Type::kString;
        s.text = View(f->get_view());
        break;
      case Bytes(6):
        s.type = XStat::Type::kBytes;
        s.text = View(f->get_view());
        break;
      case Varint(7):
        s.type = XStat::Type::kRef;
        s.uint_value = f->get_uint64();
        break;
      default:
        f->skip();
    }
  }
  return s;
}

// XEventMetadata (id 1, name 2, display_name 4, metadata 3 (skipped), stats 5, child_id 6).
XEventMetadata ReadEventMetadata(std::string_view message, const char** at) {
  XEventMetadata m;
  FieldReader f(message, at);
  while (f.Next()) {
    switch (f->tag_and_type()) {
      case Bytes(2):
        m.name = View(f->get_view());
        break;
      case Bytes(4):
        m.display_name = View(f->get_view());
        break;
      case Bytes(5): {
        const std::string_view stat = View(f->get_view());
        m.stats.push_back(ReadStat(stat, at));
        break;
      }
      default:
        f->skip();
    }
  }
  return m;
}

// A map<int64, Message> entry: key 1, value 2.
std::pair<int64_t, std::string_view> ReadMapEntry(std::string_view message, const char** at) {
  std::pair<int64_t, std::string_view> entry{0, {}};
  FieldReader f(message, at);
  while (f.Next()) {
    switch (f->tag_and_type()) {
      case Varint(1):
        entry.first = f->get_int64();
        break;
      case Bytes(2):
        entry.second = View(f->get_view());
        break;
      default:
        f->skip();
    }
  }
  return entry;
}

// XStatMetadata's name (id 1, name 2, description 3).
std::string_view ReadStatMetadataName(std::string_view message, const char** at) {
  std::string_view name;
  FieldReader f(message, at);
  while (f.Next()) {
    if (f->tag_and_type() == Bytes(2)) {
      name = View(f->get_view());
    } else {
      f->skip();
    }
  }
  return name;
}

// An XLine's fields but its events (id 1, display_id 10, name 2, display_name 11, timestamp_ns
// 3, duration_ps 9, events 4). A line cut short ends at its cut event.
void ReadLineHeader(const char** at, XLineHeader* line) {
  FieldReader f(line->message, at);
  while (f.Next()) {
    switch (f->tag_and_type()) {
      case Bytes(4): {
        bool cut = false;
        f.TakeView(&cut);
        if (cut) return;
        break;
      }
      case Varint(1):
        line->id = f->get_int64();
        break;
      case Varint(10):
        line->display_id = f->get_int64();
        break;
      case Bytes(2):
        line->name = View(f->get_view());
        break;
      case Bytes(11):
        line->display_name = View(f->get_view());
        break;
      case Varint(3):
        line->timestamp_ns = f->get_int64();
        break;
      case Varint(9):
        line->duration_ps = f->get_int64();
        break;
      default:
        f->skip();
    }
  }
}

// One XEvent (metadata_id 1, offset_ps 2, num_occurrences 5, duration_ps 3, stats 4) into `e`,
// whose stats vector is reused.
void ReadEvent(std::string_view message, const char** at, XEvent* e) {
  e->metadata_id = 0;
  e->has_offset = false;
  e->offset_ps = 0;
  e->num_occurrences = 0;
  e->duration_ps = 0;
  e->stats.clear();
  FieldReader f(message, at);
  while (f.Next()) {
    switch (f->tag_and_type()) {
      case Varint(1):
        e->metadata_id = f->get_int64();
        break;
      case Varint(2):
        e->has_offset = true;
        e->offset_ps = f->get_int64();
        break;
      case Varint(5):
        e->has_offset = false;  // oneof: the last one set wins
        e->num_occurrences = f->get_int64();
        break;
      case Varint(3):
        e->duration_ps = f->get_int64();
        break;
      case Bytes(4): {
        const std::string_view stat = View(f->get_view());
        e->stats.push_back(ReadStat(stat, at));
        break;
      }
      default:
        f->skip();
    }
  }
}

std::string PlaneLabel(const XPlane& plane) {
  return fmt::format("plane {} (\"{}\")", plane.index, plane.name);
}

std::string LineLabel(const XLineHeader& line) {
  return fmt::format("line {} (\"{}\")", line.index,
                     line.display_name.empty() ? line.name : line.display_name);
}

}  // namespace

Status XSpaceDecoder::ReadSpace(std::vector<XPlaneRef>* planes, XSpaceInfo* info) const {
  const char* at = bytes_.data();
  try {
    FieldReader f(bytes_, &at);
    while (f.Next()) {
      const char* field = at;
      switch (f->tag_and_type()) {
        case Bytes(1): {
          bool cut = false;
          const std::string_view plane = f.TakeView(&cut);
          planes->push_back({plane, OffsetOf(field), static_cast<uint32_t>(planes->size()), cut});
          if (cut) {
            return Status::InvalidInput(
                fmt::format("byte {}: plane {}: its message runs past the end of the input ({} "
                            "bytes): the file is cut short or corrupt; what comes before the "
                            "end is read",
                            OffsetOf(field), planes->size() - 1, bytes_.size()),
                OffsetOf(field));
          }
          break;
        }
        case Bytes(2):
          info->errors.push_back(View(f->get_view()));
          break;
        case Bytes(3):
          info->warnings.push_back(View(f->get_view()));
          break;
        case Bytes(4):
          info->hostnames.push_back(View(f->get_view()));
          break;
        default:
          f->skip();
      }
    }
  } catch (const protozero::exception& e) {
    return Status::InvalidInput(
        fmt::format("byte {}: the XSpace's field at this byte ({} planes before it): {}",
                    OffsetOf(at), planes->size(), Describe(e)),
        OffsetOf(at));
  }
  return Status::Ok();
}

Status XSpaceDecoder::ReadPlane(const XPlaneRef& ref, XPlane* out) const {
  out->offset = ref.offset;
  out->index = ref.index;
  const char* at = ref.message.data();
  try {
    FieldReader f(ref.message, &at);
    while (f.Next()) {
      const char* field = at;
      switch (f->tag_and_type()) {
        case Varint(1):
          out->id = f->get_int64();
          break;
        case Bytes(2):
          out->name = View(f->get_view());
          break;
        case Bytes(3): {
          XLineHeader line;
          bool cut = false;
          line.message = f.TakeView(&cut);
          line.offset = OffsetOf(field);
          line.index = static_cast<uint32_t>(out->lines.size());
          ReadLineHeader(&at, &line);
          out->lines.push_back(line);
          if (cut) return Status::Ok();  // the plane ends inside this line
          break;
        }
        // A metadata entry or stat cut short by the input's end is left out: what it would say
        // is not known.
        case Bytes(4): {
          bool cut = false;
          const std::string_view entry = f.TakeView(&cut);
          if (cut) return Status::Ok();
          const auto [id, value] = ReadMapEntry(entry, &at);
          out->event_metadata[id] = ReadEventMetadata(value, &at);
          break;
        }
        case Bytes(5): {
          bool cut = false;
          const std::string_view entry = f.TakeView(&cut);
          if (cut) return Status::Ok();
          const auto [id, value] = ReadMapEntry(entry, &at);
          out->stat_names[id] = ReadStatMetadataName(value, &at);
          break;
        }
        case Bytes(6): {
          bool cut = false;
          const std::string_view stat = f.TakeView(&cut);
          if (cut) return Status::Ok();
          out->stats.push_back(ReadStat(stat, &at));
          break;
        }
        default:
          f->skip();
      }
    }
  } catch (const protozero::exception& e) {
    return Status::InvalidInput(
        fmt::format("byte {}: {}: {}", OffsetOf(at), PlaneLabel(*out), Describe(e)), OffsetOf(at));
  }
  return Status::Ok();
}

Status XSpaceDecoder::ForEachEvent(const XPlane& plane, const XLineHeader& line,
                                   const std::function<bool(const XEvent&)>& on_event) const {
  const char* at = line.message.data();
  XEvent event;
  try {
    FieldReader f(line.message, &at);
    while (f.Next()) {
      if (f->tag_and_type() != Bytes(4)) {
        f->skip();
        continue;
      }
      const char* field = at;
      bool cut = false;
      const std::string_view message = f.TakeView(&cut);
      if (cut) {
        return Status::InvalidInput(
            fmt::format("byte {}: {}: {}: event {}: its message runs past the end of the input "
                        "({} bytes); the events before it are read",
                        OffsetOf(field), PlaneLabel(plane), LineLabel(line), event.index,
                        bytes_.size()),
            OffsetOf(field));
      }
      event.offset = OffsetOf(field);
      ReadEvent(message, &at, &event);
      if (!on_event(event)) return Status::Ok();
      ++event.index;
    }
  } catch (const protozero::exception& e) {
    return Status::InvalidInput(
        fmt::format("byte {}: {}: {}: event {}: {}", OffsetOf(at), PlaneLabel(plane),
                    LineLabel(line), event.index, Describe(e)),
        OffsetOf(at));
  }
  return Status::Ok();
}

}  // namespace opscope::import::xplane
