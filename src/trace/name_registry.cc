// Process-wide interned names for records: InternName / NameOf.
//
// Names are stored in a StringTable that never shrinks, so ids and views stay valid for the
// process lifetime. A shared mutex guards it; lookups of known names take the shared lock.
#include <mutex>
#include <shared_mutex>

#include "opscope/record.h"
#include "opscope/trace.h"

namespace opscope {
namespace {

struct NameRegistry {
  std::shared_mutex mu;
  StringTable table;
};

NameRegistry& Registry() {
  static NameRegistry* registry = new NameRegistry;  // never destroyed: records outlive main()
  return *registry;
}

}  // namespace

uint32_t InternName(std::string_view name) {
  NameRegistry& r = Registry();
  {
    std::shared_lock lock(r.mu);
    StringId id = r.table.Find(name);
    if (id != kNone) return id;
  }
  std::unique_lock lock(r.mu);
  return r.table.Intern(name);
}

std::string_view NameOf(uint32_t name_id) {
  NameRegistry& r = Registry();
  std::shared_lock lock(r.mu);
  if (name_id >= r.table.size()) return {};
  return r.table.Get(name_id);
}

}  // namespace opscope
