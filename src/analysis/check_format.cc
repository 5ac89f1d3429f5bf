// The outputs of `opscope check`: the verdict line, the text table, the JSON document, JUnit XML
// (what CI systems display as test results) and Markdown (for a pull-request comment).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/json_writer.h"
#include "opscope/check.h"

namespace opscope {
namespace {

std::string FormatNs(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f}s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f}ms", ns / 1e6);
  return fmt::format("{:.3f}us", ns / 1e3);
}

std::string Change(double pct) {
  if (std::isinf(pct)) return "new";
  return fmt::format("{:+.1f}%", pct);
}

std::string PValue(const MetricCheck& m) {
  return m.tested ? fmt::format("{:.4f}", m.test.p_value) : std::string("-");
}

// "step +89.6% (446.233us -> 846.233us, p=0.0040)"
std::string Brief(const MetricCheck& m) {
  std::string out = fmt::format("{} {} ({} -> {}", m.metric.ToString(), Change(m.change_pct),
                                FormatNs(m.baseline_median_ns), FormatNs(m.candidate_median_ns));
  if (m.tested) out += fmt::format(", p={:.4f}", m.test.p_value);
  return out + ")";
}

std::string NoiseClause(const CheckResult& r) {
  if (r.noise_estimate() || r.metrics.empty()) return "";
  return r.steps_baseline <= 1 || r.steps_candidate <= 1
             ? " [one step per side: threshold alone, no noise estimate]"
             : " [too few steps for a rank test: threshold alone, no noise estimate]";
}

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 3)) + "...";
}

void AppendXml(std::string_view s, std::string* out) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '<':
        *out += "&lt;";
        break;
      case '>':
        *out += "&gt;";
        break;
      case '&':
        *out += "&amp;";
        break;
      case '"':
        *out += "&quot;";
        break;
      case '\'':
        *out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          *out += ' ';
        } else {
          *out += c;
        }
    }
  }
}

std::string Xml(std::string_view s) {
  std::string out;
  AppendXml(s, &out);
  return out;
}

// A Markdown table cell: no HTML, no emphasis or links, no column break, one line.
std::string MdCell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '|':
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '~':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Side(std::string_view path, int64_t steps) {
  return fmt::format("{} ({})", path.empty() ? "(in memory)" : path,
                     steps > 0 ? fmt::format("{} steps", steps) : std::string("whole trace"));
}

}  // namespace

std::string CheckResult::Headline() const {
  if (verdict == Verdict::kError) return "ERROR: could not compare: " + error;
  std::vector<const MetricCheck*> regressed, noisy;
  for (const MetricCheck& m : metrics) {
    if (m.outcome == MetricCheck::Outcome::kRegression) regressed.push_back(&m);
    if (m.outcome != MetricCheck::Outcome::kRegression &&
        m.change_pct > options.max_regression_pct) {
      noisy.push_back(&m);
    }
  }
  std::string out;
  if (verdict == Verdict::kRegression) {
    out = fmt::format("REGRESSION: {} of {} metrics slower than +{:g}%:", regressed.size(),
                      metrics.size(), options.max_regression_pct);
    for (size_t i = 0; i < regressed.size() && i < 3; ++i) {
      out += (i ? ", " : " ") + Brief(*regressed[i]);
    }
    if (regressed.size() > 3) out += fmt::format(", and {} more", regressed.size() - 3);
  } else {
    out = fmt::format("PASS: no metric slower than +{:g}% ({} metrics", options.max_regression_pct,
                      metrics.size());
    for (const MetricCheck& m : metrics) {
      if (m.metric.kind == CheckMetric::Kind::kStep ||
          m.metric.kind == CheckMetric::Kind::kDevice) {
        out += fmt::format("; {} {}", m.metric.ToString(), Change(m.change_pct));
      }
    }
    out += ")";
    if (!noisy.empty()) {
      out += fmt::format("; {} rose beyond it without significance (noise)", noisy.size());
    }
  }
  return out + NoiseClause(*this);
}

std::string CheckResult::ToText() const {
  std::string out = "opscope check: " + Headline() + "\n";
  if (verdict == Verdict::kError) return out;
  out += fmt::format("baseline:  {}\ncandidate: {}\n", Side(baseline, steps_baseline),
                     Side(candidate, steps_candidate));
  out += fmt::format(
      "medians of per-step figures; a regression rises more than +{:g}% and, with steps to test, "
      "is significant (one-sided Mann-Whitney U, p < {:g})\n",
      options.max_regression_pct, options.alpha);
  for (const std::string& note : notes) out += "note: " + note + "\n";
  out += fmt::format("\n{:<40}  {:>12}  {:>12}  {:>8}  {:>8}  {}\n", "Metric", "Baseline",
                     "Candidate", "Change", "p", "Outcome");
  for (const MetricCheck& m : metrics) {
    out += fmt::format("{:<40}  {:>12}  {:>12}  {:>8}  {:>8}  {}\n", Cut(m.metric.ToString(), 40),
                       FormatNs(m.baseline_median_ns), FormatNs(m.candidate_median_ns),
                       Change(m.change_pct), PValue(m), ToString(m.outcome));
  }
  if (moved.empty()) return out + "\nNothing moved (the diff has no changed op or kernel).\n";
  out += "\nMoved most (the diff's rows by impact):\n";
  out += fmt::format("{:<10}  {:<9}  {:>12}  {:>12}  {:>12}  {}\n", "Kind", "Change", "Baseline",
                     "Candidate", "Delta", "Name");
  for (const MovedRow& row : moved) {
    out += fmt::format("{:<10}  {:<9}  {:>12}  {:>12}  {:>12}  {}\n", row.kind, row.change,
                       FormatNs(static_cast<double>(row.baseline_ns)),
                       FormatNs(static_cast<double>(row.candidate_ns)),
                       (row.candidate_ns >= row.baseline_ns ? "+" : "-") +
                           FormatNs(static_cast<double>(row.impact_ns())),
                       Cut(row.name, 100));
  }
  return out;
}

std::string CheckResult::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Field("verdict", ToString(verdict));
  w.Field("exit_code", exit_code());
  w.Field("headline", Headline());
  if (verdict == Verdict::kError) w.Field("error", error);
  w.Field("baseline", baseline);
  w.Field("candidate", candidate);
  w.Field("max_regression_pct", options.max_regression_pct);
  w.Field("alpha", options.alpha);
  w.Field("min_share_pct", options.min_share_pct);
  w.Field("min_steps", options.min_steps);
  w.Field("skip_steps", options.skip_steps);
  w.Field("test", "mann-whitney-u-one-sided");
  w.Field("noise_estimate", noise_estimate());
  w.Field("steps_baseline", steps_baseline);
  w.Field("steps_candidate", steps_candidate);
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : notes) w.String(n);
  w.EndArray();
  w.Key("metrics");
  w.BeginArray();
  for (const MetricCheck& m : metrics) {
    w.BeginObject();
    w.Field("metric", m.metric.ToString());
    w.Field("outcome", ToString(m.outcome));
    w.Field("baseline_median_ns", m.baseline_median_ns);
    w.Field("candidate_median_ns", m.candidate_median_ns);
    w.Field("change_pct", m.change_pct);  // null when only the candidate has time
    w.Field("tested", m.tested);
    if (m.baseline_ns.size() >= 2 && m.candidate_ns.size() >= 2) {
      w.Field("p_value", m.test.p_value);
      w.Field("u", m.test.u);
      w.Field("exact", m.test.exact);
      w.Field("min_p_value", m.test.min_p_value);
    }
    if (!m.note.empty()) w.Field("note", m.note);
    for (const auto& [key, values] :
         {std::pair{"baseline_ns", &m.baseline_ns}, std::pair{"candidate_ns", &m.candidate_ns}}) {
      w.Key(key);
      w.BeginArray();
      for (int64_t v : *values) w.Int(v);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("moved");
  w.BeginArray();
  for (const MovedRow& row : moved) {
    w.BeginObject();
    w.Field("kind", row.kind);
    w.Field("name", row.name);
    w.Field("change", row.change);
    w.Field("baseline_ns", row.baseline_ns);
    w.Field("candidate_ns", row.candidate_ns);
    w.Field("impact_ns", row.impact_ns());
    w.EndObject();
  }
  w.EndArray();
  w.Key("diff");
  if (diff_json.empty()) {
    w.Null();
  } else {
    w.Raw(diff_json);
  }
  w.EndObject();
  return w.Take();
}

std::string CheckResult::ToJUnit() const {
  int failures = 0;
  for (const MetricCheck& m : metrics) failures += m.outcome == MetricCheck::Outcome::kRegression;
  const bool failed = verdict == Verdict::kError;
  const size_t tests = failed ? 1 : metrics.size();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\"", tests, failures, failed ? 1 : 0);
  out += "<testsuites name=\"opscope check\" " + counts + ">\n";
  out += "  <testsuite name=\"opscope check\" " + counts + " skipped=\"0\">\n";
  out += "    <properties>\n";
  for (const auto& [key, value] :
       {std::pair<const char*, std::string>{"baseline", baseline},
        {"candidate", candidate},
        {"verdict", std::string(ToString(verdict))},
        {"max_regression_pct", fmt::format("{:g}", options.max_regression_pct)}}) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", key, Xml(value));
  }
  out += "    </properties>\n";
  if (failed) {
    out += "    <testcase classname=\"opscope.check\" name=\"compare\" time=\"0\">\n";
    out += "      <error message=\"" + Xml(error) + "\" type=\"could-not-compare\"/>\n";
    out += "    </testcase>\n";
  }
  for (const MetricCheck& m : metrics) {
    out += "    <testcase classname=\"opscope.check\" name=\"" + Xml(m.metric.ToString()) +
           "\" time=\"0\">\n";
    const std::string detail = Brief(m) + (m.note.empty() ? "" : "; " + m.note);
    if (m.outcome == MetricCheck::Outcome::kRegression) {
      out += "      <failure message=\"" + Xml(detail) + "\" type=\"regression\">";
      AppendXml(fmt::format("slower than +{:g}% allowed", options.max_regression_pct), &out);
      out += "</failure>\n";
    } else {
      out += "      <system-out>" + Xml(detail) + "</system-out>\n";
    }
    out += "    </testcase>\n";
  }
  out += "    <system-out>" + Xml(ToText()) + "</system-out>\n";
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string CheckResult::ToMarkdown() const {
  std::string out = fmt::format("### opscope check: {}\n\n", ToString(verdict));
  out += MdCell(Headline()) + "\n\n";
  if (verdict == Verdict::kError) return out;
  out += fmt::format("Baseline: {}  \nCandidate: {}\n\n", MdCell(Side(baseline, steps_baseline)),
                     MdCell(Side(candidate, steps_candidate)));
  out += "| Metric | Baseline | Candidate | Change | p | Outcome |\n";
  out += "| --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const MetricCheck& m : metrics) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", MdCell(m.metric.ToString()),
                       FormatNs(m.baseline_median_ns), FormatNs(m.candidate_median_ns),
                       Change(m.change_pct), PValue(m), ToString(m.outcome));
  }
  for (const std::string& note : notes) out += "\n_" + MdCell(note) + "_\n";
  if (moved.empty()) return out;
  out += "\n<details><summary>Moved most (the diff's rows by impact)</summary>\n\n";
  out += "| Kind | Change | Baseline | Candidate | Delta | Name |\n";
  out += "| --- | --- | ---: | ---: | ---: | --- |\n";
  for (const MovedRow& row : moved) {
    out += fmt::format("| {} | {} | {} | {} | {}{} | {} |\n", row.kind, row.change,
                       FormatNs(static_cast<double>(row.baseline_ns)),
                       FormatNs(static_cast<double>(row.candidate_ns)),
                       row.candidate_ns >= row.baseline_ns ? "+" : "-",
                       FormatNs(static_cast<double>(row.impact_ns())), MdCell(Cut(row.name, 120)));
  }
  out += "\n</details>\n";
  return out;
}

}  // namespace opscope
