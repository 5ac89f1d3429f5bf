// Text formatting shared by the job report and the job diff (src/job only).
#ifndef OPSCOPE_JOB_JOB_FORMAT_H_
#define OPSCOPE_JOB_JOB_FORMAT_H_

#include <cstdint>
#include <string>

namespace opscope::job_format {

// A duration in nanoseconds as "1.234us" / "1.234ms" / "1.234s"; "-" when not finite.
std::string Time(double ns);
inline std::string Time(int64_t ns) { return Time(static_cast<double>(ns)); }

}  // namespace opscope::job_format

#endif  // OPSCOPE_JOB_JOB_FORMAT_H_
