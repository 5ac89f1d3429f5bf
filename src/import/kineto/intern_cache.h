// A direct-mapped cache in front of the trace's string table, for the importer's hot path.
#ifndef OPSCOPE_IMPORT_KINETO_INTERN_CACHE_H_
#define OPSCOPE_IMPORT_KINETO_INTERN_CACHE_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import {

// Names and categories repeat millions of times and kernel names run to hundreds of bytes: a
// direct-mapped cache keyed by the length and the first, middle and last 8 bytes avoids hashing
// them all. Template-heavy kernel names share long prefixes and suffixes and differ in a few
// bytes, so every key byte must reach the slot index: the slot is the top bits of a
// multiplicative hash. Hits are verified byte for byte; a collision costs one table lookup.
//
// `trace` must outlive the cache (entries view the trace's own string storage, which never moves).
class InternCache {
 public:
  explicit InternCache(Trace* trace) : trace_(trace), slots_(kSlots) {}

  // The slot of `s` in a table of 2^bits slots: length and the first, middle and last 8 bytes
  // (every byte of short strings), multiplicatively hashed.
  static size_t SlotOf(std::string_view s, int bits) {
    uint64_t key = s.size() * 0x9E3779B97F4A7C15ull;
    if (s.size() >= 8) {
      uint64_t head = 0, middle = 0, tail = 0;
      std::memcpy(&head, s.data(), 8);
      std::memcpy(&middle, s.data() + (s.size() - 8) / 2, 8);
      std::memcpy(&tail, s.data() + s.size() - 8, 8);
      key ^= head;
      key = (key ^ (key >> 29)) * 0xbf58476d1ce4e5b9ull ^ middle;
      key = (key ^ (key >> 31)) * 0x94d049bb133111ebull ^ tail;
    } else {
      for (char c : s) key = (key ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    }
    key = (key ^ (key >> 32)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(key >> (64 - bits));
  }

  // trace->Intern(s), usually without touching the string table.
  StringId Intern(std::string_view s) {
    if (s.empty()) return 0;
    Slot& e = slots_[SlotOf(s, kBits)];
    if (e.id != kNone && e.text.size() == s.size() &&
        std::memcmp(e.text.data(), s.data(), s.size()) == 0) {
      return e.id;
    }
    const StringId id = trace_->Intern(s);
    e.id = id;
    e.text = trace_->Str(id);  // stable: the string table never moves its text
    return id;
  }

 private:
  static constexpr int kBits = 12;
  static constexpr size_t kSlots = size_t{1} << kBits;
  struct Slot {
    std::string_view text;
    StringId id = kNone;
  };
  Trace* trace_;
  std::vector<Slot> slots_;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_INTERN_CACHE_H_
