// Rank sets generated from the real 2-rank NCCL fixture (HTA's nccl_parser_config, rank 0): each
// generated rank is the fixture's text with its clock shifted (offset + drift), chosen
// collectives started late (start later by d, same end: the rank arrived late and the others
// waited), its distributedInfo rank and world size rewritten. The expected figures are computed
// here, from the fixture's own text, never by the code under test.
#ifndef OPSCOPE_TESTS_JOB_RANK_SET_H_
#define OPSCOPE_TESTS_JOB_RANK_SET_H_

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/analysis/test_support.h"

namespace opscope::testing {

// One NCCL kernel of the fixture, in file order.
struct FixtureCollective {
  int64_t ts_ns = 0;  // relative to the trace's base time
  int64_t dur_ns = 0;
  std::string collective;  // "Collective name"
  std::string dtype;
  int64_t nelems = 0;
};

struct RankSpec {
  int rank = 0;
  int64_t offset_ns = 0;                // clock offset at the first collective's end
  double drift = 0;                     // 1e-6 = 1 ppm
  std::map<size_t, int64_t> late_ns{};  // collective index (start order) -> late arrival
  bool distributed_info = true;         // keep distributedInfo (else the file name names it)
  bool process_group_args = true;       // keep "Process Group Name"
  std::string file_name{};              // default rank<r>.json
};

// "4458677009853.422" (microseconds, 3 decimals) as integer nanoseconds.
inline int64_t MicrosTextToNs(std::string_view text) {
  const size_t dot = text.find('.');
  int64_t us = std::stoll(std::string(text.substr(0, dot)));
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    std::string f(text.substr(dot + 1));
    f.resize(3, '0');
    frac = std::stoll(f);
  }
  return us * 1000 + frac;
}

inline std::string NsToMicrosText(int64_t ns) {
  return std::to_string(ns / 1000) + "." + std::string(3 - std::to_string(ns % 1000).size(), '0') +
         std::to_string(ns % 1000);
}

class NcclRankSet {
 public:
  NcclRankSet() {
    text_ = ReadMaybeGzip(FixturesDir() / "traces/hta/nccl_parser_config/nccl_data.json.gz");
    size_t pos = 0;
    while ((pos = text_.find("\"cat\": \"kernel\", \"name\": \"nccl", pos)) != std::string::npos) {
      FixtureCollective c;
      c.ts_ns = MicrosTextToNs(Number(text_.find("\"ts\": ", pos) + 6));
      c.dur_ns = MicrosTextToNs(Number(text_.find("\"dur\": ", pos) + 7));
      const size_t args = text_.find("\"args\"", pos);
      c.collective = Quoted(text_.find("\"Collective name\": ", args) + 19);
      c.dtype = Quoted(text_.find("\"dtype\": ", args) + 9);
      c.nelems = std::stoll(std::string(Number(text_.find("\"In msg nelems\": ", args) + 17)));
      collectives_.push_back(c);
      pos = args;
    }
    std::stable_sort(collectives_.begin(), collectives_.end(),
                     [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  }

  bool ok() const { return !text_.empty() && !collectives_.empty(); }
  const std::vector<FixtureCollective>& collectives() const { return collectives_; }
  // The clock origin offsets are stated at: the first collective's end.
  int64_t origin_ns() const { return collectives_.front().ts_ns + collectives_.front().dur_ns; }

  // Writes one rank's trace into `dir`; returns its path.
  std::filesystem::path Write(const std::filesystem::path& dir, const RankSpec& spec,
                              int world_size) const {
    std::string out;
    out.reserve(text_.size() + text_.size() / 50);
    size_t pos = 0;
    std::map<int64_t, size_t> index_of_ts;  // original kernel ts -> start-order index
    for (size_t i = 0; i < collectives_.size(); ++i) index_of_ts[collectives_[i].ts_ns] = i;
    const std::string kKernel = "\"cat\": \"kernel\", \"name\": \"nccl";
    size_t next_kernel = text_.find(kKernel);
    while (true) {
      const size_t ts = text_.find("\"ts\": ", pos);
      if (ts == std::string::npos) break;
      out.append(text_, pos, ts + 6 - pos);
      const std::string_view number = Number(ts + 6);
      int64_t t = MicrosTextToNs(number);
      const bool is_kernel = next_kernel != std::string::npos && next_kernel < ts;
      int64_t late = 0;
      if (is_kernel) {
        const size_t index = index_of_ts.at(t);
        if (auto it = spec.late_ns.find(index); it != spec.late_ns.end()) late = it->second;
        next_kernel = text_.find(kKernel, ts);
      }
      out += NsToMicrosText(Shift(spec, t + late));
      pos = ts + 6 + number.size();
      // A duration on the same line is measured by the rank's (drifting) clock too, and a late
      // start keeps the end where it was.
      const size_t dur = text_.find("\"dur\": ", pos);
      if (dur != std::string::npos && text_.find('\n', pos) > dur) {
        out.append(text_, pos, dur + 7 - pos);
        const std::string_view d = Number(dur + 7);
        const int64_t end = Shift(spec, t + MicrosTextToNs(d));
        out += NsToMicrosText(end - Shift(spec, t + late));
        pos = dur + 7 + d.size();
      }
    }
    out.append(text_, pos);
    Replace(&out, "\"rank\": 0, \"world_size\": 2",
            "\"rank\": " + std::to_string(spec.rank) +
                ", \"world_size\": " + std::to_string(world_size));
    Replace(&out, "\"Group size\": 2", "\"Group size\": " + std::to_string(world_size));
    if (!spec.distributed_info) Replace(&out, "\"distributedInfo\":", "\"notDistributedInfo\":");
    if (!spec.process_group_args) Replace(&out, "\"Process Group Name\":", "\"PG\":");
    const std::filesystem::path path =
        dir /
        (spec.file_name.empty() ? "rank" + std::to_string(spec.rank) + ".json" : spec.file_name);
    std::ofstream(path, std::ios::binary) << out;
    return path;
  }

  // Bytes of a collective: nelems x dtype size.
  static int64_t Bytes(const FixtureCollective& c) {
    return c.nelems * (c.dtype == "Float" ? 4 : c.dtype == "Long" ? 8 : 0);
  }

 private:
  int64_t Shift(const RankSpec& spec, int64_t t) const {
    return t + spec.offset_ns +
           static_cast<int64_t>(std::llround(spec.drift * static_cast<double>(t - origin_ns())));
  }
  std::string_view Number(size_t at) const {
    size_t end = at;
    while (end < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[end])) ||
                                  text_[end] == '.' || text_[end] == '-')) {
      ++end;
    }
    return std::string_view(text_).substr(at, end - at);
  }
  std::string Quoted(size_t at) const {
    const size_t close = text_.find('"', at + 1);
    return text_.substr(at + 1, close - at - 1);
  }
  static void Replace(std::string* s, const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = s->find(from, p)) != std::string::npos; p += to.size()) {
      s->replace(p, from.size(), to);
    }
  }

  std::string text_;
  std::vector<FixtureCollective> collectives_;
};

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_JOB_RANK_SET_H_
