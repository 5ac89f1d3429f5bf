// The record API and a session, linked against opscope::profiler alone.
#include <iostream>

#include "opscope/profiler.h"

int main() {
  opscope::Profiler prof;
  prof.Start();
  for (int i = 0; i < 3; ++i) {
    OPSCOPE_SCOPE("consumer::step");
  }
  prof.Stop();
  const opscope::KeyAverages averages = prof.key_averages();
  std::cout << averages.Table("count", 5);
  for (const opscope::KeyAverage& row : averages.rows()) {
    if (row.key == "consumer::step" && row.count == 3) return 0;
  }
  std::cerr << "record_only: expected 3 calls of consumer::step\n";
  return 1;
}
