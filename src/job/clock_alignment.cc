// Clock fit from collective end times (see clock_alignment.h).
#include "job/clock_alignment.h"

#include <algorithm>
#include <cmath>

namespace opscope::job {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

// Fits d = offset + drift * x; drift only when x spans enough.
void Fit(const std::vector<double>& x, const std::vector<double>& d, ClockFit* fit) {
  fit->points = static_cast<int>(x.size());
  if (x.empty()) return;
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (x.size() < 3 || *hi - *lo < static_cast<double>(kMinDriftSpanNs)) {
    fit->offset_ns = Median(d);
    fit->drift = 0;
    return;
  }
  double mx = 0, md = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    md += d[i];
  }
  mx /= static_cast<double>(x.size());
  md /= static_cast<double>(x.size());
  double sxx = 0, sxd = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxd += (x[i] - mx) * (d[i] - md);
  }
  fit->drift = sxx > 0 ? sxd / sxx : 0;
  fit->offset_ns = md - fit->drift * mx;
}

}  // namespace

int64_t ClockFit::ToReference(int64_t rank_ns) const {
  // Integer arithmetic where it can be: epoch nanoseconds do not fit a double's mantissa.
  if (drift == 0) return rank_ns - static_cast<int64_t>(std::llround(offset_ns));
  const double rel = static_cast<double>(rank_ns - origin_ns) - offset_ns;
  return origin_ns + static_cast<int64_t>(std::llround(rel / (1.0 + drift)));
}

ClockFit FitClock(std::vector<std::pair<int64_t, int64_t>> pairs) {
  ClockFit fit;
  if (pairs.empty()) return fit;
  std::sort(pairs.begin(), pairs.end());
  fit.origin_ns = pairs.front().first;
  std::vector<double> x, d;
  for (const auto& [ref, rank] : pairs) {
    x.push_back(static_cast<double>(ref - fit.origin_ns));
    d.push_back(static_cast<double>(rank - ref));
  }
  Fit(x, d, &fit);
  std::vector<double> residuals(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    residuals[i] = std::fabs(d[i] - fit.offset_ns - fit.drift * x[i]);
  }
  // A floor of 1 us: ends that agree that closely are never outliers (and exact data has a MAD
  // of 0).
  const double limit = std::max(5 * Median(residuals), 1000.0);
  std::vector<double> kept_x, kept_d;
  for (size_t i = 0; i < x.size(); ++i) {
    if (residuals[i] <= limit) {
      kept_x.push_back(x[i]);
      kept_d.push_back(d[i]);
    }
  }
  if (kept_x.size() < x.size() && !kept_x.empty()) Fit(kept_x, kept_d, &fit);
  return fit;
}

}  // namespace opscope::job
