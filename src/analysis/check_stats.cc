// The statistics of `opscope check`: the one-sided Mann-Whitney U test, one metric's comparison
// from its per-step samples, the verdict, and metric specs ("op:NAME").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "opscope/check.h"

namespace opscope {
namespace {

// Exact distributions are counted over at most this many values (both sides together): subset
// counts stay below 2^53 well past it, and the table is n_b x N(N+1) cells.
constexpr size_t kExactLimit = 50;

// Midranks doubled (integers): tied values share the mean of their ranks, 1-based.
std::vector<int64_t> DoubledMidranks(const std::vector<double>& pooled) {
  std::vector<size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return pooled[x] < pooled[y]; });
  std::vector<int64_t> ranks(pooled.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const int64_t doubled = static_cast<int64_t>(i + 1 + j + 1);  // (first + last rank)
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = doubled;
    i = j + 1;
  }
  return ranks;
}

// P(sum of n_b of the doubled midranks >= observed) over all C(N, n_b) equally likely subsets.
double ExactUpperTail(const std::vector<int64_t>& ranks, size_t n_b, int64_t observed) {
  const int64_t max_sum = std::accumulate(ranks.begin(), ranks.end(), int64_t{0});
  // ways[k][s]: subsets of k of the values seen so far with doubled-rank sum s.
  std::vector<std::vector<double>> ways(n_b + 1, std::vector<double>(max_sum + 1, 0.0));
  ways[0][0] = 1;
  for (const int64_t r : ranks) {
    for (size_t k = n_b; k >= 1; --k) {
      for (int64_t s = max_sum; s >= r; --s) ways[k][s] += ways[k - 1][s - r];
    }
  }
  double tail = 0, total = 0;
  for (int64_t s = 0; s <= max_sum; ++s) {
    total += ways[n_b][s];
    if (s >= observed) tail += ways[n_b][s];
  }
  return total > 0 ? tail / total : 1.0;
}

double Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

}  // namespace

RankTest MannWhitneyGreater(std::span<const double> baseline, std::span<const double> candidate) {
  RankTest t;
  const size_t n_a = baseline.size(), n_b = candidate.size(), n = n_a + n_b;
  if (n_a == 0 || n_b == 0) return t;
  std::vector<double> pooled(baseline.begin(), baseline.end());
  pooled.insert(pooled.end(), candidate.begin(), candidate.end());
  const std::vector<int64_t> ranks = DoubledMidranks(pooled);
  int64_t doubled_sum_b = 0;
  for (size_t i = n_a; i < n; ++i) doubled_sum_b += ranks[i];
  const double na = static_cast<double>(n_a), nb = static_cast<double>(n_b);
  t.u = static_cast<double>(doubled_sum_b) / 2 - nb * (nb + 1) / 2;
  // 1 / C(n, n_b), by a product that stays in range.
  double choose = 1;
  for (size_t i = 1; i <= n_b; ++i) choose = choose * static_cast<double>(n_a + i) / i;
  t.min_p_value = 1 / choose;
  if (n <= kExactLimit) {
    t.exact = true;
    t.p_value = ExactUpperTail(ranks, n_b, doubled_sum_b);
    return t;
  }
  // Normal approximation: mean n_a n_b / 2, variance with the tie correction
  // n_a n_b / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))), and a continuity correction of 1/2.
  std::vector<double> sorted = pooled;
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double k = static_cast<double>(j - i);
    ties += k * k * k - k;
    i = j;
  }
  const double nn = static_cast<double>(n);
  const double var = na * nb / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
  if (var <= 0) {
    t.p_value = 1;
    return t;
  }
  const double z = (t.u - na * nb / 2 - 0.5) / std::sqrt(var);
  t.p_value = 0.5 * std::erfc(z / std::sqrt(2.0));
  return t;
}

Status CheckMetric::Parse(std::string_view spec, CheckMetric* metric) {
  CheckMetric m;
  if (spec == "step") {
    m.kind = Kind::kStep;
  } else if (spec == "device") {
    m.kind = Kind::kDevice;
  } else if (spec.starts_with("op:") && spec.size() > 3) {
    m.kind = Kind::kOp;
    m.name = std::string(spec.substr(3));
  } else if (spec.starts_with("kernel:") && spec.size() > 7) {
    m.kind = Kind::kKernel;
    m.name = std::string(spec.substr(7));
  } else {
    return Status::InvalidArgument("metric '" + std::string(spec) +
                                   "': expected step, device, op:NAME or kernel:NAME");
  }
  *metric = std::move(m);
  return Status::Ok();
}

std::string CheckMetric::ToString() const {
  switch (kind) {
    case Kind::kStep:
      return "step";
    case Kind::kDevice:
      return "device";
    case Kind::kOp:
      return "op:" + name;
    case Kind::kKernel:
      return "kernel:" + name;
  }
  return "step";
}

int64_t MovedRow::impact_ns() const {
  return candidate_ns > baseline_ns ? candidate_ns - baseline_ns : baseline_ns - candidate_ns;
}

MetricCheck CompareSamples(const CheckMetric& metric, std::vector<int64_t> baseline_ns,
                           std::vector<int64_t> candidate_ns, const CheckOptions& options) {
  MetricCheck m;
  m.metric = metric;
  m.baseline_median_ns = Median(baseline_ns);
  m.candidate_median_ns = Median(candidate_ns);
  const double delta = m.candidate_median_ns - m.baseline_median_ns;
  if (m.baseline_median_ns > 0) {
    m.change_pct = 100 * delta / m.baseline_median_ns;
  } else {
    m.change_pct = delta > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  if (baseline_ns.size() >= 2 && candidate_ns.size() >= 2) {
    const std::vector<double> a(baseline_ns.begin(), baseline_ns.end());
    const std::vector<double> b(candidate_ns.begin(), candidate_ns.end());
    m.test = MannWhitneyGreater(a, b);
    m.tested = m.test.min_p_value <= options.alpha;
    if (!m.tested) {
      m.note = fmt::format(
          "too few steps for the rank test to reach p < {} (smallest possible p {:.3g}): "
          "threshold alone",
          options.alpha, m.test.min_p_value);
    }
  } else {
    m.note = "one step on a side: threshold alone, no noise estimate";
  }
  const bool beyond = m.change_pct > options.max_regression_pct;
  const bool significant = !m.tested || m.test.p_value < options.alpha;
  if (beyond && significant) {
    m.outcome = MetricCheck::Outcome::kRegression;
  } else if (m.change_pct < -options.max_regression_pct) {
    m.outcome = MetricCheck::Outcome::kImprovement;
  }
  m.baseline_ns = std::move(baseline_ns);
  m.candidate_ns = std::move(candidate_ns);
  return m;
}

void DecideVerdict(CheckResult* result) {
  if (result->verdict == CheckResult::Verdict::kError) return;
  result->verdict = CheckResult::Verdict::kPass;
  for (const MetricCheck& m : result->metrics) {
    if (m.outcome == MetricCheck::Outcome::kRegression) {
      result->verdict = CheckResult::Verdict::kRegression;
    }
  }
}

bool CheckResult::noise_estimate() const {
  return std::any_of(metrics.begin(), metrics.end(), [](const MetricCheck& m) { return m.tested; });
}

CheckResult CheckFailed(std::string message, std::string baseline, std::string candidate) {
  CheckResult r;
  r.verdict = CheckResult::Verdict::kError;
  r.error = std::move(message);
  r.baseline = std::move(baseline);
  r.candidate = std::move(candidate);
  return r;
}

std::string_view ToString(CheckResult::Verdict verdict) {
  switch (verdict) {
    case CheckResult::Verdict::kPass:
      return "pass";
    case CheckResult::Verdict::kRegression:
      return "regression";
    case CheckResult::Verdict::kError:
      return "error";
  }
  return "error";
}

std::string_view ToString(MetricCheck::Outcome outcome) {
  switch (outcome) {
    case MetricCheck::Outcome::kPass:
      return "pass";
    case MetricCheck::Outcome::kRegression:
      return "regression";
    case MetricCheck::Outcome::kImprovement:
      return "improvement";
  }
  return "pass";
}

}  // namespace opscope
