// Bridges the device to the profiler's session config.
#include "device/neuron/capture.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "opscope/activity.h"

namespace opscope::neuron {

bool CurrentCaptureOptions(CaptureOptions* options) {
  *options = CaptureOptions{};
  return DeviceActivityEnabled();
}

void ReportDroppedDeviceEvents(int core, uint64_t count) { (void)core, (void)count; }

uint64_t ParseCoreList(std::string_view text) {
  if (text.find_first_not_of(" \t") == std::string_view::npos) return ~0ull;
  uint64_t mask = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string part(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    auto bad = [&] {
      return std::invalid_argument("capture_enabled_for_nc: '" + part +
                                   "' is not a core or range like 0,1,2-5 (cores 0..63)");
    };
    size_t dash = part.find('-');
    char* end = nullptr;
    long lo = std::strtol(part.c_str(), &end, 10);
    long hi = lo;
    if (end == part.c_str()) throw bad();
    if (dash != std::string::npos) {
      if (end != part.c_str() + dash) throw bad();
      const char* hs = part.c_str() + dash + 1;
      hi = std::strtol(hs, &end, 10);
      if (end == hs) throw bad();
    }
    while (*end == ' ') ++end;
    if (*end != '\0' || lo < 0 || hi > 63 || lo > hi) throw bad();
    for (long c = lo; c <= hi; ++c) mask |= 1ull << c;
  }
  return mask;
}

}  // namespace opscope::neuron
