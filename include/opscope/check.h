// A regression verdict for CI: compare a candidate profile with a baseline and decide whether it
// got slower (`opscope check BASELINE CANDIDATE`).
//
//   opscope::CheckOptions options;                  // +5% allowed; step, device, ops, kernels
//   options.skip_steps = 1;                          // warm-up
//   opscope::CheckResult r = opscope::CheckTraces(baseline, candidate, options);
//   std::cout << r.ToText();                         // the verdict line first
//   return r.exit_code();                            // 0 pass, 1 regression, 2 could not compare
//
// What is compared: the step time (each host `ProfilerStep#N` annotation; the whole trace's span
// where either trace has none), device busy time, and each op's and kernel's device time, as
// `opscope report` and `opscope diff` define them (docs/check.md). Each metric has one figure per
// step on each side; the medians are compared. A metric regresses when the candidate's median
// exceeds the baseline's by more than `max_regression_pct` and, with two or more steps on each
// side, the rise is also significant: a one-sided Mann-Whitney U test (candidate larger) on the
// per-step figures gives p < `alpha`. With one step on a side, or too few steps for the test ever
// to reach `alpha`, the threshold alone decides and the result says it has no noise estimate.
//
// Thread safety: every function is pure over its arguments.
#ifndef OPSCOPE_CHECK_H_
#define OPSCOPE_CHECK_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

struct CheckMetric {
  enum class Kind : uint8_t { kStep, kDevice, kOp, kKernel };
  Kind kind = Kind::kStep;
  std::string name;  // the op or kernel name (kOp, kKernel); empty otherwise
  // "step", "device", "op:NAME" or "kernel:NAME" (NAME may hold ':'); InvalidArgument otherwise.
  static Status Parse(std::string_view spec, CheckMetric* metric);
  std::string ToString() const;  // the spec Parse reads
};

struct CheckOptions {
  double max_regression_pct = 5;  // a median may rise by this much (percent) and pass
  // The metrics that decide. Empty: step, device, and every op and kernel found on both sides
  // whose device time is at least `min_share_pct` of the device busy time.
  std::vector<CheckMetric> metrics;
  double min_share_pct = 1;
  int min_steps = 1;    // fewer steps on a side (after skipping) cannot be compared (exit 2)
  int skip_steps = 0;   // leading steps dropped on each side (warm-up)
  double alpha = 0.05;  // significance level of the rank test
  int rows = 10;        // moved rows kept (-1: all)
};

// The one-sided Mann-Whitney U test of "candidate tends to be larger than baseline": exact from
// the permutation distribution of the midranks (ties included) when both sides hold 50 values or
// fewer together, else the normal approximation with tie and continuity corrections.
struct RankTest {
  double u = 0;        // U of the candidate: pairs (baseline, candidate) with candidate larger,
                       // ties counting one half
  double p_value = 1;  // P(U >= u) under "both sides come from one distribution"
  bool exact = false;
  // The smallest p any data could give with these sample sizes (no ties): 1 / C(n_a + n_b, n_b).
  double min_p_value = 1;
};
RankTest MannWhitneyGreater(std::span<const double> baseline, std::span<const double> candidate);

struct MetricCheck {
  enum class Outcome : uint8_t { kPass, kRegression, kImprovement };
  CheckMetric metric;
  std::vector<int64_t> baseline_ns, candidate_ns;  // per step (one value: the whole trace)
  double baseline_median_ns = 0, candidate_median_ns = 0;
  // (candidate - baseline) / baseline in percent; +inf when only the candidate has time.
  double change_pct = 0;
  bool tested = false;  // the rank test ran and could reach alpha
  RankTest test;
  std::string note;  // why there is no test, when there is none
  Outcome outcome = Outcome::kPass;
};

// One of the rows that moved most: the diff's rows (ops and kernels; for jobs ranks, collectives
// and ops across ranks), by |candidate - baseline|.
struct MovedRow {
  std::string kind;  // "op", "kernel", "rank", "collective"
  std::string name;
  std::string change;  // "added", "removed", "changed"
  int64_t baseline_ns = 0, candidate_ns = 0;
  int64_t impact_ns() const;
};

struct CheckResult {
  enum class Verdict : uint8_t { kPass = 0, kRegression = 1, kError = 2 };
  Verdict verdict = Verdict::kPass;
  std::string error;  // why it could not compare (kError); names the file when one is at fault
  std::string baseline, candidate;  // what was compared (paths as given)
  CheckOptions options;
  // Steps compared per side after skipping; 0 when a side has no ProfilerStep# annotation (the
  // whole trace is then one figure on both sides).
  int64_t steps_baseline = 0, steps_candidate = 0;
  std::vector<std::string> notes;  // how the figures were taken (whole trace, skipped steps)
  std::vector<MetricCheck> metrics;
  std::vector<MovedRow> moved;
  std::string diff_json;  // the full diff: `opscope diff --json`'s document ("" on error)

  int exit_code() const { return static_cast<int>(verdict); }
  bool noise_estimate() const;   // a rank test backed at least one metric
  std::string Headline() const;  // the verdict line
  std::string ToText() const;    // verdict line, metrics, moved rows
  std::string ToJson() const;
  std::string ToJUnit() const;     // JUnit XML: one test case per metric
  std::string ToMarkdown() const;  // for a pull-request comment
};

// A result that could not compare (exit code 2), with what its outputs say.
CheckResult CheckFailed(std::string message, std::string baseline = "", std::string candidate = "");

// Two traces. A named metric found in neither trace, or too few steps, makes an error result.
CheckResult CheckTraces(const Trace& baseline, const Trace& candidate,
                        const CheckOptions& options = {});

// The building blocks CheckTraces uses and job checks (job.h) share: one metric's figures and
// outcome from its per-step samples, and the verdict from the metrics.
MetricCheck CompareSamples(const CheckMetric& metric, std::vector<int64_t> baseline_ns,
                           std::vector<int64_t> candidate_ns, const CheckOptions& options);
void DecideVerdict(CheckResult* result);

std::string_view ToString(CheckResult::Verdict verdict);
std::string_view ToString(MetricCheck::Outcome outcome);

}  // namespace opscope

#endif  // OPSCOPE_CHECK_H_
