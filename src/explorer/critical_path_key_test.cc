// CriticalPathKey: the critical-path cache is keyed by what the path depends on, so requests that
// differ only in an ignored parameter share one computed path instead of each taking the heavy
// pool (a client looping over new instance= values with no step kept it busy for everyone).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "explorer/explorer_api.h"

namespace opscope::explorer {
namespace {

std::string Key(std::vector<std::pair<std::string, std::string>> params) {
  HttpRequest req;
  req.params = std::move(params);
  CriticalPathOptions options;
  return CriticalPathKey(req, &options);
}

TEST(CriticalPathKey, IgnoredParametersAreNotPartOfTheKey) {
  EXPECT_EQ(Key({{"step", ""}, {"instance", "7"}}), Key({{"step", ""}, {"instance", "8"}}));
  EXPECT_EQ(Key({{"step", ""}, {"instance", "7"}}), Key({{"step", ""}}));
  EXPECT_NE(Key({{"instance", "1"}}), Key({{"instance", "2"}}));  // the default step
  EXPECT_NE(Key({{"step", "Step"}, {"instance", "1"}}), Key({{"step", "Step"}}));
  EXPECT_EQ(Key({{"instance", "-1"}}), "");  // bad: answered with 400
}

}  // namespace
}  // namespace opscope::explorer
