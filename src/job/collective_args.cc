// Collectives as one rank saw them (see collective_args.h).
#include "job/collective_args.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "analysis/device_activity.h"

namespace opscope::job {
namespace {

struct DtypeSize {
  std::string_view name;
  int bytes;
};
// c10::ScalarType names as the profiler's collective args write them.
constexpr DtypeSize kDtypes[] = {
    {"Float", 4},
    {"Double", 8},
    {"Half", 2},
    {"BFloat16", 2},
    {"Int", 4},
    {"Long", 8},
    {"Short", 2},
    {"Char", 1},
    {"Byte", 1},
    {"Bool", 1},
    {"ComplexHalf", 4},
    {"ComplexFloat", 8},
    {"ComplexDouble", 16},
    {"Float8_e4m3fn", 1},
    {"Float8_e5m2", 1},
    {"Float8_e4m3fnuz", 1},
    {"Float8_e5m2fnuz", 1},
    {"UInt16", 2},
    {"UInt32", 4},
    {"UInt64", 8},
};

// Lower case without '_' and ' ': "all_reduce" and "AllReduce" read alike.
std::string Squash(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '_' || c == ' ' || c == '-') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// An arg as an integer whether the producer wrote a number or a numeric string.
bool ReadInt(simdjson::dom::object& args, std::string_view key, int64_t* out) {
  simdjson::dom::element v;
  if (args[key].get(v) != simdjson::SUCCESS) return false;
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = i;
    return true;
  }
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS) {
    *out = static_cast<int64_t>(d);
    return true;
  }
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS && !s.empty()) {
    char* end = nullptr;
    const std::string text(s);
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (end && *end == '\0') {
      *out = parsed;
      return true;
    }
  }
  return false;
}

bool ReadString(simdjson::dom::object& args, std::string_view key, std::string* out) {
  simdjson::dom::element v;
  if (args[key].get(v) != simdjson::SUCCESS) return false;
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    *out = std::string(s);
    return true;
  }
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = std::to_string(i);
    return true;
  }
  return false;
}

// Fills the record's collective fields from one args object; false when it has none of them.
bool ReadCollectiveArgs(simdjson::dom::parser& parser, const std::string& json, CollectiveRecord* r,
                        int64_t* explicit_seq, bool* has_seq) {
  simdjson::dom::object args;
  if (parser.parse(json).get_object().get(args) != simdjson::SUCCESS) return false;
  const bool has_name = ReadString(args, "Collective name", &r->name);
  ReadString(args, "Process Group Name", &r->group);
  ReadString(args, "dtype", &r->dtype);
  ReadInt(args, "In msg nelems", &r->in_nelems);
  ReadInt(args, "Out msg nelems", &r->out_nelems);
  ReadInt(args, "Group size", &r->group_size);
  *has_seq = ReadInt(args, "Seq", explicit_seq);
  return has_name || !r->group.empty();
}

}  // namespace

int DtypeBytes(std::string_view dtype) {
  for (const DtypeSize& d : kDtypes) {
    if (d.name == dtype) return d.bytes;
  }
  return 0;
}

std::string CollectiveKind(std::string_view name) {
  const std::string s = Squash(name);
  // Longer names first: "reducescatter" and "allreduce" both contain "reduce".
  static constexpr std::string_view kKinds[] = {"reducescatter", "allreduce", "allgather",
                                                "alltoallv",     "alltoall",  "broadcast",
                                                "sendrecv",      "reduce"};
  for (std::string_view k : kKinds) {
    if (s.find(k) != std::string::npos) return std::string(k);
  }
  if (s.find("send") != std::string::npos || s.find("recv") != std::string::npos) {
    return "sendrecv";
  }
  return "";
}

double BusBandwidthFactor(std::string_view kind, int64_t n) {
  if (n <= 0) return -1;
  const double nd = static_cast<double>(n);
  if (kind == "allreduce") return 2.0 * (nd - 1) / nd;
  if (kind == "allgather" || kind == "reducescatter" || kind == "alltoall") return (nd - 1) / nd;
  if (kind == "broadcast" || kind == "reduce" || kind == "sendrecv") return 1.0;
  return -1;
}

std::vector<CollectiveRecord> ExtractCollectives(const Trace& trace) {
  const auto& slices = trace.slices();
  const auto& tracks = trace.tracks();
  const int64_t base = trace.metadata().base_time_ns;
  simdjson::dom::parser parser;
  std::vector<CollectiveRecord> out;
  std::vector<std::pair<int64_t, bool>> seqs;  // explicit seq, present
  analysis::CommunicationNames is_communication(trace);
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (s.kind != ActivityKind::kKernel || !is_communication(s.name)) continue;
    const std::string_view name = trace.Str(s.name);
    CollectiveRecord r;
    r.kernel = std::string(name);
    r.stream = s.track < tracks.size() ? tracks[s.track].tid : 0;
    r.start_ns = base + s.ts_ns;
    r.end_ns = base + s.ts_ns + s.dur_ns;
    r.slice = i;
    int64_t seq = 0;
    bool has_seq = false;
    // Newer traces put the collective's args on the kernel; older ones only on the op that
    // launched it (record_param_comms).
    if (!ReadCollectiveArgs(parser, trace.ArgsJson(s.args), &r, &seq, &has_seq)) {
      const uint32_t op = trace.Link(i).op;
      if (op != kNone)
        ReadCollectiveArgs(parser, trace.ArgsJson(slices[op].args), &r, &seq, &has_seq);
    }
    if (r.name.empty()) r.name = CollectiveKind(name);
    out.push_back(std::move(r));
    seqs.emplace_back(seq, has_seq);
  }
  std::vector<size_t> order(out.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (out[a].start_ns != out[b].start_ns) return out[a].start_ns < out[b].start_ns;
    return out[a].stream < out[b].stream;
  });
  std::vector<CollectiveRecord> sorted;
  sorted.reserve(out.size());
  std::map<int64_t, int> stream_ordinal;  // communication streams without a group, by first use
  std::map<std::string, int64_t> next_seq;
  for (size_t k : order) {
    CollectiveRecord r = std::move(out[k]);
    if (r.group.empty()) {
      const auto it =
          stream_ordinal.emplace(r.stream, static_cast<int>(stream_ordinal.size())).first;
      r.group = fmt::format("stream {}", it->second);
    }
    int64_t& next = next_seq[r.group];
    r.seq = seqs[k].second ? seqs[k].first : next;
    ++next;
    sorted.push_back(std::move(r));
  }
  return sorted;
}

}  // namespace opscope::job
