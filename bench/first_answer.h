// The Explorer's first answer end to end: the time from starting `opscope explore FILE` to the
// first full view answered over HTTP (the lanes, then the full-range viewport at the UI's width),
// as a browser opened at the printed address gets it. Runs the given opscope binary as a child
// process, so an older build can be measured side by side.
#ifndef OPSCOPE_BENCH_FIRST_ANSWER_H_
#define OPSCOPE_BENCH_FIRST_ANSWER_H_

#include <string>
#include <vector>

namespace opscope::bench {

struct FirstAnswer {
  double seconds = 0;   // start to the viewport's answer; < 0: it failed
  double listen_s = 0;  // start to the access line on stdout
  std::string error;    // why it failed
};

// `threads` < 0: no --threads flag (the default). Polls the API every 5 ms while it answers 503.
FirstAnswer MeasureFirstAnswer(const std::string& opscope, const std::string& file, int threads);

// Prints, for --threads 1, 2 and the default, the best of `runs` first answers of `opscope` and,
// when `baseline` is not empty, of `baseline`, run interleaved; each with `target_s` and met /
// NOT met. `label` names the file.
void ReportFirstAnswer(const std::string& label, const std::string& file,
                       const std::string& opscope, const std::string& baseline, int runs,
                       double target_s);

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_FIRST_ANSWER_H_
