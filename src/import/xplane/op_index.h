// The op a device activity ran in, found by time: XLA's op level (the "XLA Ops" line's events,
// else the modules') encloses the kernels it launched. Shared by the XPlane reader and XProf's
// trace JSON (xprof_trace.h).
#ifndef OPSCOPE_IMPORT_XPLANE_OP_INDEX_H_
#define OPSCOPE_IMPORT_XPLANE_OP_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace opscope::import::xplane {

class OpIndex {
 public:
  // An op-level slice: its span, the External id it carries, and its name (hlo_op stats name it;
  // the view must outlive the index).
  struct Op {
    int64_t begin_ns, end_ns, external_id;
    std::string_view name;
  };

  void AddOp(const Op& op) { ops_.push_back(op); }
  void AddModule(const Op& op) { modules_.push_back(op); }
  // Once every op and module is added.
  void Sort() {
    auto by_begin = [](const Op& a, const Op& b) { return a.begin_ns < b.begin_ns; };
    std::stable_sort(ops_.begin(), ops_.end(), by_begin);
    std::stable_sort(modules_.begin(), modules_.end(), by_begin);
  }

  // The External id of the op named `hlo_op` that encloses [begin_ns, end_ns], else of the
  // innermost op enclosing it, among the few that start last before it (ops on one line rarely
  // nest deeply); else the same among modules; 0 when none encloses it.
  int64_t Find(int64_t begin_ns, int64_t end_ns, std::string_view hlo_op) const {
    constexpr size_t kLookBack = 16;
    for (const std::vector<Op>* list : {&ops_, &modules_}) {
      auto it = std::upper_bound(list->begin(), list->end(), begin_ns,
                                 [](int64_t t, const Op& op) { return t < op.begin_ns; });
      int64_t enclosing = 0;
      for (size_t k = 0; k < kLookBack && it != list->begin(); ++k) {
        --it;
        if (it->end_ns < end_ns) continue;
        if (!hlo_op.empty() && it->name == hlo_op) return it->external_id;
        if (enclosing == 0) enclosing = it->external_id;
      }
      if (enclosing != 0) return enclosing;
    }
    return 0;
  }

 private:
  std::vector<Op> ops_, modules_;  // each sorted by begin_ns once Sort() ran
};

}  // namespace opscope::import::xplane

#endif  // OPSCOPE_IMPORT_XPLANE_OP_INDEX_H_
