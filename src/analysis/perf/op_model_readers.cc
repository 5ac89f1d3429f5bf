// Each TraceLens model's reading of an op's args (see op_model_readers.h). Positions, defaults and
// failures follow the matching class in TraceLens/PerfModel/perf_model.py.
#include "analysis/perf/op_model_readers.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "analysis/perf/perf_formulas.h"

namespace opscope::analysis::readers {
namespace {

using Shape = std::vector<int64_t>;

// ---- Python-style text of parameters, as TraceLens's sheets print them ----

std::string ReprInts(const std::vector<int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}

std::string ReprStr(const std::optional<std::string>& s) {
  if (!s) return "None";
  return "'" + *s + "'";
}

std::string ReprStrs(std::initializer_list<std::optional<std::string>> v) {
  std::string out = "(";
  size_t i = 0;
  for (const auto& s : v) {
    if (i++) out += ", ";
    out += ReprStr(s);
  }
  return out + (v.size() == 1 ? ",)" : ")");
}

std::string ReprBool(bool b) { return b ? "True" : "False"; }

std::string ReprFloat(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e16)
    return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

std::string ReprInt(double v) { return fmt::format("{}", static_cast<int64_t>(v)); }

// ---- Argument access that fails the way Python's indexing and conversions do ----

class Reader {
 public:
  explicit Reader(const OpArgs& a) : a_(a) {}
  bool Dim(size_t i, const std::vector<int64_t>** out) {
    if (!a_.has_dims) return Fail("no Input Dims");
    if (i >= a_.dims.size() || a_.dims[i].is_list)
      return Fail(fmt::format("no tensor input {}", i));
    *out = &a_.dims[i].sizes;
    return true;
  }
  bool HasDim(size_t i) const { return a_.has_dims && i < a_.dims.size(); }
  // Python's `len(dims) > i and dims[i]`: present and not empty.
  bool NonEmptyDim(size_t i) const { return HasDim(i) && !a_.dims[i].empty(); }
  bool Type(size_t i, std::string* out) {
    if (!a_.has_types) return Fail("no Input type");
    if (i >= a_.types.size()) return Fail(fmt::format("no Input type {}", i));
    *out = a_.types[i];
    return true;
  }
  bool Stride(size_t i, const std::vector<int64_t>** out) {
    if (!a_.has_strides) return Fail("no Input Strides");
    if (i >= a_.strides.size() || a_.strides[i].is_list)
      return Fail("no Input Strides " + std::to_string(i));
    *out = &a_.strides[i].sizes;
    return true;
  }
  bool Concrete(size_t i, std::string* out) {
    if (!a_.has_concrete) return Fail("no Concrete Inputs");
    if (i >= a_.concrete.size()) return Fail(fmt::format("no Concrete Input {}", i));
    *out = a_.concrete[i];
    return true;
  }
  // Records `why` unless an earlier failure is recorded; false, for use in conditions.
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  // The first recorded failure (or `why` when none is) as the reader's result.
  Status Error(std::string why = "arguments do not fit the model") {
    Fail(std::move(why));
    return Status::InvalidArgument(error_);
  }

 private:
  const OpArgs& a_;
  std::string error_;  // the first failure; "" while none
};

// "[16, 16]" -> {16, 16} (TraceLens str_to_tuple / ast.literal_eval of an int list).
bool ParseIntList(std::string_view s, std::vector<int64_t>* out) {
  out->clear();
  size_t b = s.find('['), e = s.rfind(']');
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) return false;
  std::string_view body = s.substr(b + 1, e - b - 1);
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string item(body.substr(0, comma));
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    while (end && (*end == ' ')) ++end;
    if (end == item.c_str() || (end && *end != '\0')) return false;
    out->push_back(v);
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return true;
}

// "[True, False, True]" -> bools.
bool ParseBoolList(std::string_view s, std::vector<bool>* out) {
  out->clear();
  size_t b = s.find('['), e = s.rfind(']');
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) return false;
  std::string_view body = s.substr(b + 1, e - b - 1);
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "True" || item == "1") {
      out->push_back(true);
    } else if (item == "False" || item == "0") {
      out->push_back(false);
    } else {
      return false;
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return true;
}

// Python eval of "True" / "False".
bool ParsePyBool(std::string_view s, bool* out) {
  if (s == "True") return *out = true, true;
  if (s == "False") return *out = false, true;
  return false;
}

bool ParseFloat(std::string_view s, double* out) {
  const std::string t(s);
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size();
}

std::string Spec(const char* maf, std::string_view dtype) {
  const std::string_view p = perf::PrecisionOf(dtype);
  return p.empty() ? std::string() : std::string(maf) + "_" + std::string(p);
}

std::optional<double> BytesIf(bool known, double bytes) {
  return known ? std::optional<double>(bytes) : std::nullopt;
}

// Two dtypes of a model's inputs, both required (TraceLens indexes both).
bool TwoTypes(Reader& r, size_t a, size_t b, std::string* ta, std::string* tb) {
  return r.Type(a, ta) && r.Type(b, tb);
}

// Strides the way TraceLens reads them: a missing "Input Strides" key gives None ("None"),
// a missing position inside it fails.
bool OptionalStride(Reader& r, const OpArgs& a, size_t i, std::string* repr) {
  if (!a.has_strides) {
    *repr = "None";
    return true;
  }
  const Shape* s = nullptr;
  if (!r.Stride(i, &s)) return false;
  *repr = ReprInts(*s);
  return true;
}

// An elementwise op's optional output at position `i` (TraceLens reads it when that input's dims
// are non-empty): its dtype and stride repr, or nullopt and "None" when absent. False when the
// position is there but its dtype or stride is not.
bool OptionalOutput(Reader& r, size_t i, std::optional<std::string>* type, std::string* stride) {
  *type = std::nullopt;
  *stride = "None";
  if (!r.NonEmptyDim(i)) return true;
  std::string t;
  const Shape* s = nullptr;
  if (!r.Type(i, &t) || !r.Stride(i, &s)) return false;
  *type = t;
  *stride = ReprInts(*s);
  return true;
}

// Python's float() of a concrete input, with TraceLens's SDPA rule: "" or "None" -> 0.0 and an
// unparsable value ignored.
double DropoutOf(std::string_view s) {
  double v = 0;
  if (s.empty() || s == "None" || !ParseFloat(s, &v)) return 0;
  return v;
}

bool CausalFlag(std::string_view s) {
  if (s.empty() || s == "None") return false;
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true";
}

// A normalization's figures from its args, as TraceLens's class for `kind` reads them: channels,
// affine, bias, training, and a backward's output mask. False (the reason recorded in `r`) when
// the args do not say.
bool ReadNormParams(ModelKind kind, bool vendor_bn_bwd, Reader& r, const Shape& x, perf::Norm* n,
                    std::vector<bool>* mask) {
  std::string c;
  Shape list;
  auto channel_dim = [&]() {
    if (x.size() < 2) return r.Fail("norm input has no channel dimension");
    n->channels = static_cast<double>(x[1]);
    return true;
  };
  bool ok = true;
  switch (kind) {
    case ModelKind::kBatchNorm:
    case ModelKind::kInstanceNorm:
      n->is_affine = r.HasDim(2);
      ok = r.Concrete(5, &c) && channel_dim();
      n->is_training = !c.empty();  // Python's bool() of the recorded text
      break;
    case ModelKind::kGroupNorm:
      n->is_affine = r.HasDim(2);
      n->is_training = true;
      ok = channel_dim();
      break;
    case ModelKind::kLayerNorm:
    case ModelKind::kRmsNorm:
      n->is_affine = r.HasDim(2);
      n->has_bias = kind == ModelKind::kLayerNorm && r.HasDim(3);
      n->is_training = kind == ModelKind::kLayerNorm;
      ok = r.Concrete(1, &c) && ParseIntList(c, &list);
      n->channels = perf::Elements(list);
      if (kind == ModelKind::kLayerNorm && ok && !r.HasDim(3)) ok = r.Fail("no bias argument");
      break;
    case ModelKind::kBatchNormBwd:
      *mask = {r.HasDim(0)};
      n->is_affine = r.HasDim(2);
      ok = channel_dim();
      if (ok && !vendor_bn_bwd) ok = r.Concrete(7, &c);
      n->is_training = !vendor_bn_bwd && !c.empty();
      break;
    case ModelKind::kLayerNormBwd:
      ok = r.Concrete(2, &c) && ParseIntList(c, &list) && r.Concrete(7, &c) &&
           ParseBoolList(c, mask) && mask->size() >= 3;
      n->channels = perf::Elements(list);
      if (ok) n->is_affine = (*mask)[1], n->has_bias = (*mask)[2];
      n->is_training = true;
      break;
    case ModelKind::kGroupNormBwd: {
      n->is_affine = r.HasDim(5);
      n->is_training = true;
      std::string groups;
      ok = r.Concrete(9, &c) && ParseBoolList(c, mask) && !mask->empty() &&
           r.Concrete(8, &groups) && channel_dim();
      const double g = groups.empty() ? 0 : std::strtod(groups.c_str(), nullptr);
      if (ok && g <= 0) ok = r.Fail("bad group count");
      if (ok) n->channels /= g;
      break;
    }
    default:
      ok = r.Fail("not a normalization");
  }
  return ok;
}

}  // namespace

Status ReadGemm(ModelKind kind, const OpArgs& args, OpModel* m) {
  Reader r(args);
  const bool add = kind == ModelKind::kAddmm || kind == ModelKind::kBaddbmm;
  const bool batched = kind == ModelKind::kBmm || kind == ModelKind::kBaddbmm;
  const size_t ia = add ? 1 : 0, ib = add ? 2 : 1;
  const Shape *a = nullptr, *b = nullptr;
  if (!r.Dim(ia, &a) || !r.Dim(ib, &b)) return r.Error();
  perf::Gemm g;
  if (batched) {
    if (a->size() != 3 || b->size() != 3) return r.Error("bmm inputs must be 3-d");
    g = {.b = double((*a)[0]), .m = double((*a)[1]), .n = double((*b)[2]), .k = double((*a)[2])};
  } else {
    if (a->size() < 2 || b->size() < 2) return r.Error("mm inputs must be 2-d");
    g = {.b = 1, .m = double((*a)[0]), .n = double((*b)[1]), .k = double((*a)[1])};
  }
  g.bias = add || (kind == ModelKind::kScaledMm && args.dims.size() == 3);
  std::string ta, tb, sa, sb;
  if (!TwoTypes(r, ia, ib, &ta, &tb)) return r.Error();
  if (!OptionalStride(r, args, ia, &sa) || !OptionalStride(r, args, ib, &sb)) {
    return r.Error();
  }
  const int bpe = perf::BytesPerElement(ta);
  int bpe_out = bpe;
  if (kind == ModelKind::kScaledMm) {
    if (bpe == 0 || perf::BytesPerElement(tb) == 0) {
      return r.Error("scaled_mm dtypes of unknown size");
    }
    bpe_out = bpe == 1 ? 2 : (bpe == 2 || bpe == 4 ? bpe : 0);
  }
  m->flops = perf::GemmFlops(g);
  m->bytes = BytesIf(bpe != 0 && bpe_out != 0, perf::GemmBytes(g, bpe, bpe, bpe, bpe_out));
  m->compute_spec = Spec("matrix", ta);
  m->params = {{"M", ReprInt(g.m)},
               {"N", ReprInt(g.n)},
               {"K", ReprInt(g.k)},
               {"bias", ReprBool(g.bias)},
               {"stride_A", sa},
               {"stride_B", sb},
               {"dtype_A_B", ReprStrs({ta, tb})},
               {"B", ReprInt(g.b)}};
  return Status::Ok();
}

Status ReadConv(bool backward, const OpArgs& args, OpModel* m) {
  Reader r(args);
  const size_t ix = backward ? 1 : 0, iw = backward ? 2 : 1, ic = backward ? 4 : 3;
  const Shape *x = nullptr, *w = nullptr;
  if (!r.Dim(ix, &x) || !r.Dim(iw, &w)) return r.Error();
  if (x->size() < 3 || x->size() > 5) return r.Error("conv input is not 3-5 d");
  const size_t nd = x->size() - 2;
  perf::Conv c;
  c.x = *x;
  c.w = *w;
  c.bias = backward ? r.NonEmptyDim(3) : args.dims.size() == 3;
  std::string s[6];
  for (int i = 0; i < 6; ++i) {
    if (!r.Concrete(ic + i, &s[i])) return r.Error();
  }
  auto tuple_or = [&](const std::string& text, int64_t fill, Shape* out) {
    if (text.empty()) {
      out->assign(nd, fill);
      return true;
    }
    if (!ParseIntList(text, out) || out->empty()) return r.Fail("bad conv argument " + text);
    if (out->size() == 1) out->assign(nd, (*out)[0]);
    return true;
  };
  if (!tuple_or(s[0], 1, &c.stride) || !tuple_or(s[1], 0, &c.padding) ||
      !tuple_or(s[2], 1, &c.dilation) || !tuple_or(s[4], 0, &c.output_padding) ||
      !ParsePyBool(s[3], &c.transposed)) {
    return r.Error("bad conv arguments");
  }
  char* end = nullptr;
  const long long groups = std::strtoll(s[5].c_str(), &end, 10);
  if (s[5].empty() || *end != '\0') return r.Error("bad conv groups");
  std::string tx, tw, sx, sw;
  if (!TwoTypes(r, ix, iw, &tx, &tw)) return r.Error();
  if (tx != tw) return r.Error("input and weight dtypes differ");
  if (!OptionalStride(r, args, ix, &sx) || !OptionalStride(r, args, iw, &sw)) {
    return r.Error();
  }
  const auto out = perf::ConvOutputShape(c);
  if (!out) return r.Error("conv shapes do not agree");
  const int bpe = perf::BytesPerElement(tx);
  m->flops = backward ? perf::ConvBwdFlops(c, *out) : perf::ConvFlops(c, *out);
  m->bytes = BytesIf(bpe != 0,
                     backward ? perf::ConvBwdBytes(c, *out, bpe) : perf::ConvBytes(c, *out, bpe));
  m->compute_spec = Spec("matrix", tx);
  m->params = {{"convNd", fmt::format("conv{}d", nd)},
               {"input_shape", ReprInts(c.x)},
               {"filter_shape", ReprInts(c.w)},
               {"dtype_input_weight", ReprStrs({tx, tw})},
               {"input_stride", sx},
               {"weight_stride", sw},
               {"bias", ReprBool(c.bias)},
               {"stride", ReprInts(c.stride)},
               {"padding", ReprInts(c.padding)},
               {"dilation", ReprInts(c.dilation)},
               {"transposed_conv", ReprBool(c.transposed)},
               {"output_padding", ReprInts(c.output_padding)},
               {"groups", std::to_string(groups)}};
  return Status::Ok();
}

Status ReadAttention(ModelKind kind, const OpArgs& args, OpModel* m) {
  Reader r(args);
  const bool bwd = kind == ModelKind::kFlashAttentionBwd;
  const bool bnhd = kind == ModelKind::kFlashAttention || bwd;  // [B, N, H, d] vs [B, H, N, d]
  const size_t iq = bwd ? 1 : 0;
  const Shape *q = nullptr, *k = nullptr, *v = nullptr;
  if (!r.Dim(iq, &q) || !r.Dim(iq + 1, &k) || !r.Dim(iq + 2, &v)) return r.Error();
  if (q->size() != 4 || k->size() != 4 || v->size() != 4) {
    return r.Error("attention inputs must be 4-d");
  }
  const size_t ih = bnhd ? 2 : 1, in = bnhd ? 1 : 2;
  if ((*q)[0] != (*k)[0] || (*q)[0] != (*v)[0] || (*k)[ih] != (*v)[ih] || (*k)[in] != (*v)[in] ||
      (*q)[3] != (*k)[3]) {
    return r.Error("q, k, v shapes do not agree");
  }
  perf::Attention a{.b = double((*q)[0]),
                    .n_q = double((*q)[in]),
                    .h_q = double((*q)[ih]),
                    .n_kv = double((*k)[in]),
                    .h_kv = double((*k)[ih]),
                    .d_qk = double((*q)[3]),
                    .d_v = double((*v)[3])};
  double dropout = 0;
  std::string c1, c2;
  if (kind == ModelKind::kSdpaFlash || kind == ModelKind::kSdpaEfficient) {
    const size_t id = kind == ModelKind::kSdpaFlash ? 3 : 5;
    if (!r.Concrete(id, &c1) || !r.Concrete(id + 1, &c2)) return r.Error();
    dropout = DropoutOf(c1);
    a.causal = CausalFlag(c2);
  } else if (kind == ModelKind::kFlashAttention) {
    if (!r.Concrete(3, &c1) || !r.Concrete(5, &c2) || !ParseFloat(c1, &dropout) ||
        !ParsePyBool(c2, &a.causal)) {
      return r.Error("bad dropout / causal");
    }
  } else {  // flash_attn backward: dropout [8], causal [10], both optional
    a.causal = true;
    if (args.has_concrete && args.concrete.size() > 8 && !args.concrete[8].empty()) {
      if (!ParseFloat(args.concrete[8], &dropout)) return r.Error("bad dropout");
    }
    if (args.has_concrete && args.concrete.size() > 10 && !args.concrete[10].empty() &&
        !ParsePyBool(args.concrete[10], &a.causal)) {
      return r.Error("bad causal");
    }
  }
  std::string tq, tk;
  if (!TwoTypes(r, iq, iq + 1, &tq, &tk)) return r.Error();
  const bool flash = kind != ModelKind::kSdpaEfficient;
  const auto flops = bwd ? perf::SdpaBwdFlops(a, flash) : perf::SdpaFlops(a);
  if (!flops) return r.Error("causal attention with N_Q != N_KV");
  // TraceLens counts 2 bytes per element whatever the dtype; opscope uses the dtype's size.
  const int bpe = perf::BytesPerElement(tq) ? perf::BytesPerElement(tq) : 2;
  m->flops = *flops;
  m->bytes = bwd ? perf::SdpaBwdBytes(a, bpe) : perf::SdpaBytes(a, bpe);
  m->compute_spec = Spec("matrix", tq);
  m->params = {{"B", ReprInt(a.b)},       {"N_Q", ReprInt(a.n_q)},   {"H_Q", ReprInt(a.h_q)},
               {"N_KV", ReprInt(a.n_kv)}, {"H_KV", ReprInt(a.h_kv)}, {"d_h_qk", ReprInt(a.d_qk)},
               {"d_h_v", ReprInt(a.d_v)}};
  if (bnhd) {
    std::string sq, sk, sv;
    if (!OptionalStride(r, args, iq, &sq) || !OptionalStride(r, args, iq + 1, &sk) ||
        !OptionalStride(r, args, iq + 2, &sv)) {
      return r.Error();
    }
    m->params.insert(m->params.end(), {{"q_stride", sq}, {"k_stride", sk}, {"v_stride", sv}});
  }
  m->params.insert(m->params.end(), {{"dropout", ReprFloat(dropout)},
                                     {"causal", ReprBool(a.causal)},
                                     {"flash_impl", ReprBool(flash)},
                                     {"dtype_A_B", ReprStrs({tq, tk})}});
  return Status::Ok();
}

Status ReadUnary(const OpArgs& args, OpModel* m) {
  Reader r(args);
  const Shape* x = nullptr;
  std::string tin, sin;
  if (!r.Dim(0, &x) || !r.Type(0, &tin)) return r.Error();
  const Shape* st = nullptr;
  if (!r.Stride(0, &st)) return r.Error();
  sin = ReprInts(*st);
  std::optional<std::string> tout;
  std::string sout;
  if (!OptionalOutput(r, 1, &tout, &sout)) return r.Error();
  const double n = perf::Elements(*x);
  const int bpe_in = perf::BytesPerElement(tin);
  const int bpe_out = tout ? perf::BytesPerElement(*tout) : bpe_in;
  m->flops = perf::UnaryFlops(n);
  m->bytes = BytesIf(bpe_in != 0 && bpe_out != 0, perf::UnaryBytes(n, bpe_in, bpe_out));
  m->compute_spec = Spec("vector", tin);
  m->params = {{"op_shape", ReprInts(*x)},
               {"dtype_in_out", ReprStrs({tin, tout})},
               {"stride_input", sin},
               {"stride_output", sout}};
  return Status::Ok();
}

// TraceLens aten_upsample_nearest / aten_replication_pad: a unary elementwise op whose output
// shape comes from Concrete Inputs[1] (the output's spatial sizes, or the padding pairs innermost
// dimension first); FLOPs one per output element, bytes the input read plus the output written.
Status ReadResample(ModelKind kind, const OpArgs& args, OpModel* m) {
  Reader r(args);
  const Shape* x = nullptr;
  const Shape* st = nullptr;
  std::string dtype, spec;
  if (!r.Dim(0, &x) || !r.Type(0, &dtype) || !r.Stride(0, &st) || !r.Concrete(1, &spec)) {
    return r.Error();
  }
  std::vector<int64_t> values;
  if (!ParseIntList(spec, &values)) return r.Error("Concrete Inputs[1] is not an int list");
  Shape out = *x;
  if (kind == ModelKind::kUpsampleNearest) {
    out.assign(x->begin(), x->begin() + std::min<size_t>(2, x->size()));
    out.insert(out.end(), values.begin(), values.end());
  } else {
    for (size_t i = 0; i < values.size() / 2; ++i) {
      if (i >= out.size()) return r.Error("more padding pairs than dimensions");
      out[out.size() - 1 - i] += values[2 * i] + values[2 * i + 1];
    }
  }
  const int bpe = perf::BytesPerElement(dtype);
  const double n_in = perf::Elements(*x), n_out = perf::Elements(out);
  m->flops = perf::UnaryFlops(n_out);
  m->bytes = BytesIf(bpe != 0, n_in * bpe + n_out * bpe);
  m->compute_spec = Spec("vector", dtype);
  m->params = {{"input_shape", ReprInts(*x)}, {"output_shape", ReprInts(out)}};
  if (kind == ModelKind::kReplicationPad) {
    m->params.push_back({"padding", fmt::format("[{}]", fmt::join(values, ", "))});
  }
  m->params.insert(m->params.end(), {{"op_shape", ReprInts(out)},
                                     {"dtype_in_out", ReprStrs({dtype, dtype})},
                                     {"stride_input", ReprInts(*st)},
                                     {"stride_output", "None"}});
  return Status::Ok();
}

Status ReadBinary(const OpArgs& args, OpModel* m) {
  Reader r(args);
  const Shape *a = nullptr, *b = nullptr, *sa = nullptr, *sb = nullptr;
  std::string ta, tb;
  if (!r.Dim(0, &a) || !r.Dim(1, &b) || !TwoTypes(r, 0, 1, &ta, &tb) || !r.Stride(0, &sa) ||
      !r.Stride(1, &sb)) {
    return r.Error();
  }
  std::optional<std::string> tout;
  std::string sout;
  if (!OptionalOutput(r, 2, &tout, &sout)) return r.Error();
  const auto out = perf::BroadcastShape(*a, *b);
  if (!out) return r.Error("shapes do not broadcast");
  const int bpe_a = perf::BytesPerElement(ta), bpe_b = perf::BytesPerElement(tb);
  int bpe_out = 0;
  if (tout) {
    bpe_out = perf::BytesPerElement(*tout);
  } else if (bpe_a && bpe_b) {
    // Two tensors promote to the wider type; a tensor and a scalar keep the tensor's.
    bpe_out = !a->empty() && !b->empty() ? std::max(bpe_a, bpe_b) : bpe_a;
  }
  const double n_out = perf::Elements(*out);
  m->flops = perf::BinaryFlops(n_out);
  m->bytes = BytesIf(
      bpe_a && bpe_b && bpe_out,
      perf::BinaryBytes(perf::Elements(*a), perf::Elements(*b), n_out, bpe_a, bpe_b, bpe_out));
  m->compute_spec = Spec("vector", ta);
  m->params = {{"shape_in1", ReprInts(*a)},
               {"shape_in2", ReprInts(*b)},
               {"dtype_in1_in2_out", ReprStrs({ta, tb, tout})},
               {"stride_input1", ReprInts(*sa)},
               {"stride_input2", ReprInts(*sb)},
               {"stride_output", sout}};
  return Status::Ok();
}

Status ReadNorm(ModelKind kind, std::string_view name, const OpArgs& args, OpModel* m) {
  Reader r(args);
  const bool bwd = kind == ModelKind::kBatchNormBwd || kind == ModelKind::kLayerNormBwd ||
                   kind == ModelKind::kGroupNormBwd;
  const bool vendor_bn_bwd =
      kind == ModelKind::kBatchNormBwd &&
      (name == "aten::cudnn_batch_norm_backward" || name == "aten::miopen_batch_norm_backward");
  const size_t in = bwd && !vendor_bn_bwd ? 1 : 0;
  const Shape* x = nullptr;
  const Shape* st = nullptr;
  std::string tin;
  if (!r.Dim(in, &x) || !r.Type(in, &tin) || !r.Stride(in, &st)) return r.Error();
  perf::Norm n{.elements = perf::Elements(*x), .has_bias = true};
  std::vector<bool> mask;
  if (!ReadNormParams(kind, vendor_bn_bwd, r, *x, &n, &mask)) {
    return r.Error("bad normalization arguments");
  }
  const int bpe = perf::BytesPerElement(tin);
  if (bpe == 0) return r.Error("dtype of unknown size: " + tin);
  if (kind == ModelKind::kRmsNorm) {
    m->flops = perf::RmsNormFlops(n);
    m->bytes = perf::RmsNormBytes(n, bpe, bpe);
  } else if (bwd) {
    m->flops = perf::NormBwdFlops(n, mask[0]);
    m->bytes = perf::NormBwdBytes(n, bpe, bpe, mask[0]);
  } else {
    m->flops = perf::NormFlops(n);
    m->bytes = perf::NormBytes(n, bpe, bpe);
  }
  m->compute_spec = Spec("vector", tin);
  m->params = {{"op_shape", ReprInts(*x)},
               {"dtype_in_out", ReprStrs({tin, std::nullopt})},
               {"stride_input", ReprInts(*st)},
               {"stride_output", "None"},
               {"num_channels",
                kind == ModelKind::kGroupNormBwd ? ReprFloat(n.channels) : ReprInt(n.channels)},
               {"has_bias", ReprBool(n.has_bias)},
               {"is_affine", ReprBool(n.is_affine)},
               {"is_training", ReprBool(n.is_training)}};
  if (bwd) {
    std::string text = "[";
    for (size_t i = 0; i < mask.size(); ++i) text += (i ? ", " : "") + ReprBool(mask[i]);
    m->params.emplace_back("output_mask", text + "]");
  }
  return Status::Ok();
}

Status ReadReduce(std::string_view name, const OpArgs& args, OpModel* m) {
  // TraceLens reads dim/keepdim from Concrete Inputs only when they are not strings; a
  // profiler's are always strings, so a reduction counts one output element (cumsum/cumprod:
  // as many as its input).
  double in = 0;
  Shape shape;
  if (args.has_dims && !args.dims.empty() && !args.dims[0].is_list) {
    shape = args.dims[0].sizes;
    in = perf::Elements(shape);
  }
  const bool scan = name.find("cumsum") != std::string_view::npos ||
                    name.find("cumprod") != std::string_view::npos;
  const double out = args.has_dims && !args.dims.empty() ? (scan ? in : 1) : 0;
  const std::string tin = args.has_types && !args.types.empty() ? args.types[0] : "";
  const int bpe = tin.empty() ? 0 : perf::BytesPerElement(tin);
  std::string_view type = "sum";
  for (std::string_view t : {"mean", "max", "min", "norm"}) {
    if (name.find(t) != std::string_view::npos) {
      type = t;
      break;
    }
  }
  m->flops = perf::ReduceFlops(in);
  m->bytes = BytesIf(bpe != 0, perf::ReduceBytes(in, out, bpe, bpe));
  m->compute_spec = tin.empty() ? "" : Spec("vector", tin);
  m->params = {
      {"num_input_elems", ReprInt(in)},
      {"num_output_elems", ReprInt(out)},
      {"dtype_in_out", ReprStrs({tin.empty() ? std::nullopt : std::optional(tin), std::nullopt})},
      {"reduce_type", std::string(type)}};
  return Status::Ok();
}

}  // namespace opscope::analysis::readers
