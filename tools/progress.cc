// A progress bar on stderr (see progress.h).
#include "tools/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace opscope::tools {

ProgressBar::ProgressBar(std::string label, bool quiet)
    : label_(std::move(label)),
      enabled_(!quiet && isatty(STDERR_FILENO) == 1),
      start_(Clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double mb = static_cast<double>(done) / 1e6;
  const double rate = seconds > 0 ? mb / seconds : 0;
  constexpr int kWidth = 20;
  std::string line = "\r" + label_;
  char buf[160];
  if (total > 0 && done <= total) {
    const int filled =
        static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * kWidth);
    line += "  [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
    const double left = rate > 0 ? (static_cast<double>(total - done) / 1e6) / rate : 0;
    std::snprintf(buf, sizeof(buf), "  %.0f / %.0f MB  %.0f MB/s  %.1f s left", mb,
                  static_cast<double>(total) / 1e6, rate, left);
  } else {
    std::snprintf(buf, sizeof(buf), "  %.0f MB  %.0f MB/s", mb, rate);
  }
  line += buf;
  line += "\x1b[K";  // clear what a longer previous line left
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::UpdateCount(uint64_t done, uint64_t total, const char* unit) {
  if (!enabled_ || total == 0) return;
  const Clock::time_point now = Clock::now();
  if (done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  constexpr int kWidth = 20;
  const uint64_t shown = std::min(done, total);
  const int filled =
      static_cast<int>(static_cast<double>(shown) / static_cast<double>(total) * kWidth);
  std::string line =
      "\r" + label_ + "  [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  char buf[160];
  if (shown > 0) {
    const double left = seconds / static_cast<double>(shown) * static_cast<double>(total - shown);
    std::snprintf(buf, sizeof(buf), "  %llu / %llu %s  %.1f s left",
                  static_cast<unsigned long long>(shown), static_cast<unsigned long long>(total),
                  unit, left);
  } else {
    std::snprintf(buf, sizeof(buf), "  0 / %llu %s", static_cast<unsigned long long>(total), unit);
  }
  line += buf;
  line += "\x1b[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Done() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

std::function<void(uint64_t, uint64_t)> ProgressBar::Callback() {
  if (!enabled_) return {};
  return [this](uint64_t done, uint64_t total) { Update(done, total); };
}

}  // namespace opscope::tools
