// The Neuron model's parameters: presets, the key=value file format, the documented valid range
// of every key (each error names file, line, key, value and range), and the config file's limits.
// Regression tests for values that used to crash, hang or grow without bound. docs/neuron-model.md
// documents every parameter with the presets' values and the ranges checked here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "device/neuron/device.h"
#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

TEST(NeuronParams, PresetsDifferWhereTheHardwareDoes) {
  Params trn1 = Preset("trn1");
  Params trn2 = Preset("trn2");
  EXPECT_EQ(trn1.preset, "trn1");
  EXPECT_EQ(trn1.num_cores, 2);
  EXPECT_EQ(trn2.num_cores, 8);
  EXPECT_EQ(trn1.logical_core_size, 1);
  EXPECT_EQ(trn2.logical_core_size, 2);  // trn2's default logical core is two physical cores
  EXPECT_DOUBLE_EQ(trn1.vector_ghz, 1.12);
  EXPECT_DOUBLE_EQ(trn2.vector_ghz, 0.96);
  // NKI data paths: trn2's VectorE streams twice the 32-bit elements per cycle, four times the
  // 16-bit ones (performance mode), so it is faster than trn1's despite the lower clock.
  EXPECT_GT(trn2.vector_elems_per_cycle * trn2.vector_ghz,
            trn1.vector_elems_per_cycle * trn1.vector_ghz);
  EXPECT_EQ(trn2.vector_elems_per_cycle_16bit, 4 * trn1.vector_elems_per_cycle_16bit);
  EXPECT_LT(trn2.tensor_fp8_factor, trn1.tensor_fp8_factor);  // trn2's double FP8 rate
  EXPECT_GT(trn2.dma_queue_gbps, trn1.dma_queue_gbps);
  EXPECT_NO_THROW(ValidateParams(trn1));
  EXPECT_NO_THROW(ValidateParams(trn2));
  EXPECT_THROW(Preset("trn9"), ParamsError);
  try {
    Preset("inf1");
  } catch (const ParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("trn1"), std::string::npos) << e.what();
  }
}

TEST(NeuronParams, OverridesApplyAndRoundTrip) {
  Params p = Preset("trn1");
  ApplyOverrides("# comment\n\nexec_launch_us = 12.5  # trailing\n  dma_queues=4\n", "t.cfg", &p);
  EXPECT_DOUBLE_EQ(p.exec_launch_us, 12.5);
  EXPECT_DOUBLE_EQ(p.dma_queues, 4);
  Params q;
  ApplyOverrides(FormatParams(p), "dump", &q);
  EXPECT_EQ(FormatParams(q), FormatParams(p));
  ApplyOverrides("preset = trn2\nvector_ghz = 2\n", "t.cfg", &q);
  EXPECT_EQ(q.preset, "trn2");
  EXPECT_DOUBLE_EQ(q.num_cores, 8);
  EXPECT_DOUBLE_EQ(q.vector_ghz, 2);
}

std::string ErrorOf(const std::string& text) {
  Params p;
  try {
    ApplyOverrides(text, "my.cfg", &p);
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "";
}

TEST(NeuronParams, ErrorsNameFileLineKeyValueAndRange) {
  EXPECT_EQ(ErrorOf("vector_ghz = 1\nvectr_ghz = 2\n"),
            "my.cfg:2: unknown key 'vectr_ghz' (see docs/neuron-model.md for the parameters)");
  EXPECT_EQ(ErrorOf("\n\nvector_ghz = fast"),
            "my.cfg:3: value of 'vector_ghz' is not a number: 'fast'");
  EXPECT_EQ(ErrorOf("vector_ghz"), "my.cfg:1: expected 'key = value', got 'vector_ghz'");
  EXPECT_EQ(ErrorOf("dma_queues = 0"),
            "my.cfg:1: 'dma_queues' = 0 is out of range: must be an integer in [1, 64]");
  EXPECT_EQ(ErrorOf("exec_launch_us = -1"),
            "my.cfg:1: 'exec_launch_us' = -1 is out of range: must be a number in [0, 1000000]");
  EXPECT_NE(ErrorOf("exec_fixed_us = 380").find("was replaced by"), std::string::npos);
  EXPECT_NE(ErrorOf("preset = trn7").find("my.cfg:1: unknown Neuron preset 'trn7'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("num_cores = 6\nlogical_core_size = 4").find("must divide"), std::string::npos);
}

// Values that crashed (SIGFPE, abort), hung in synchronize, grew memory without bound or reported
// a zero capacity are now range errors, before any device exists.
TEST(NeuronParams, ValuesThatBrokeTheDeviceAreRangeErrors) {
  for (const char* line :
       {"partitions = 1e-300", "num_cores = 1000000", "clock_offset_ns = 1e300", "dma_queues = 1e9",
        "hbm_gib = 1e30", "partitions = 0.5", "vector_ghz = 0", "max_inflight_executions = 100000",
        "free_tile_bytes = inf", "tensor_ghz = nan", "clock_drift_ppm = 1e6"}) {
    const std::string error = ErrorOf(line);
    SCOPED_TRACE(line);
    EXPECT_NE(error.find("my.cfg:1: '"), std::string::npos) << error;
    EXPECT_NE(error.find("out of range: must be"), std::string::npos) << error;
  }
  Params p;
  p.num_cores = 1e6;  // set in code, not through a file: the device refuses it too
  EXPECT_THROW(NeuronDevice dev(p), ParamsError);
  p = Params();
  p.partitions = 1e-300;
  EXPECT_THROW(EstimateProgram(Program("x"), p), ParamsError);
  EXPECT_NE(FormatParamRanges().find("partitions: an integer in [1, 128]"), std::string::npos);
}

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return ::testing::TempDir() + "/" + name; }
  std::string ErrorOfFile(const std::string& path) {
    Params p;
    try {
      ApplyOverridesFile(path, &p);
    } catch (const ParamsError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(ConfigFileTest, FileOverridesApplyAndErrorsNameTheFile) {
  const std::string path = Path("neuron_params_test.cfg");
  {
    std::ofstream out(path);
    out << "exec_launch_us = 7\n";
  }
  Params p;
  ApplyOverridesFile(path, &p);
  EXPECT_DOUBLE_EQ(p.exec_launch_us, 7);
  {
    std::ofstream out(path);
    out << "exec_launch_us = 7\npartitions = 1e-300\n";
  }
  EXPECT_EQ(ErrorOfFile(path), path +
                                   ":2: 'partitions' = 1e-300 is out of range: must be an "
                                   "integer in [1, 128]");
  std::remove(path.c_str());
  EXPECT_NE(ErrorOfFile(path).find("cannot read Neuron device config '" + path + "'"),
            std::string::npos);
}

TEST_F(ConfigFileTest, DirectoriesDevicesAndHugeFilesAreRefused) {
  const std::string dir = Path("neuron_params_dir");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(ErrorOfFile(dir), "Neuron device config '" + dir + "' is a directory, not a file");
  // An endless device is read no further than the size limit (it used to grow to 8 GB).
  struct stat st {};
  if (::stat("/dev/zero", &st) == 0) {
    EXPECT_NE(ErrorOfFile("/dev/zero").find("is larger than 1048576 bytes"), std::string::npos);
  }
  const std::string big = Path("neuron_params_big.cfg");
  {
    std::ofstream out(big);
    for (size_t n = 0; n <= kMaxConfigBytes; n += 16) out << "# padding......\n";
  }
  EXPECT_NE(ErrorOfFile(big).find("is larger than"), std::string::npos);
  {
    std::ofstream out(big, std::ios::binary);
    out << "exec_launch_us = 1\n" << std::string(3, '\0');
  }
  EXPECT_NE(ErrorOfFile(big).find("not a text file"), std::string::npos);
  std::remove(big.c_str());
}

// docs/neuron-model.md's parameter table: one row per key, with the trn1 and trn2 values the
// presets hold, the range ValidateParams checks, and a source or reason.
double DocNumber(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  double unit = 1;
  for (const auto& [suffix, scale] : {std::pair<std::string, double>{" KiB", 1024.0},
                                      {" MiB", 1024.0 * 1024},
                                      {" GiB", 1024.0 * 1024 * 1024}}) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      text.resize(text.size() - suffix.size());
      unit = scale;
    }
  }
  const size_t slash = text.find('/');
  if (slash != std::string::npos) {
    return std::stod(text.substr(0, slash)) / std::stod(text.substr(slash + 1)) * unit;
  }
  size_t used = 0;
  const double v = std::stod(text, &used);
  if (used != text.size()) throw std::invalid_argument("not a number: " + text);
  return v * unit;
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::istringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const size_t b = cell.find_first_not_of(' ');
    const size_t e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;
}

std::map<std::string, double> Values(const Params& p) {
  std::map<std::string, double> values;
  std::istringstream in(FormatParams(p));
  std::string key, eq, value;
  while (in >> key >> eq >> value) {
    if (key != "preset") values[key] = std::stod(value);
  }
  return values;
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

TEST(NeuronParams, EveryParameterIsDocumentedWithItsValuesRangeAndSource) {
  const char* dir = std::getenv("OPSCOPE_SOURCE_DIR");
  const std::string path = std::string(dir != nullptr ? dir : ".") + "/docs/neuron-model.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::map<std::string, std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells = Cells(line);
    if (cells.size() != 5 || cells[0].size() < 3) continue;  // key trn1 trn2 range source
    rows[cells[0].substr(1, cells[0].size() - 2)] = cells;
  }
  const std::map<std::string, double> trn1 = Values(Preset("trn1"));
  const std::map<std::string, double> trn2 = Values(Preset("trn2"));
  std::istringstream ranges(FormatParamRanges());
  int checked = 0;
  while (std::getline(ranges, line)) {
    const std::string key = line.substr(0, line.find(':'));
    SCOPED_TRACE(key);
    auto row = rows.find(key);
    ASSERT_NE(row, rows.end()) << path << " has no row for '" << key << "'";
    const std::vector<std::string>& c = row->second;
    EXPECT_TRUE(Near(DocNumber(c[1]), trn1.at(key))) << c[1] << " vs " << trn1.at(key);
    EXPECT_TRUE(Near(DocNumber(c[2]), trn2.at(key))) << c[2] << " vs " << trn2.at(key);
    // "int [1, 64], ..." against "an integer in [1, 64]".
    const bool integer = line.find("an integer") != std::string::npos;
    EXPECT_EQ(c[3].starts_with("int "), integer) << c[3];
    const auto bounds = [](const std::string& s) {
      const size_t b = s.find('['), comma = s.find(',', b), e = s.find(']', b);
      return std::pair(DocNumber(s.substr(b + 1, comma - b - 1)),
                       DocNumber(s.substr(comma + 1, e - comma - 1)));
    };
    const auto [doc_min, doc_max] = bounds(c[3]);
    const auto [min, max] = bounds(line);
    EXPECT_TRUE(Near(doc_min, min) && Near(doc_max, max)) << c[3] << " vs " << line;
    EXPECT_GE(c[4].size(), 10u) << "no source or reason";
    ++checked;
  }
  EXPECT_EQ(checked, int(trn1.size()));
}

}  // namespace
}  // namespace opscope::neuron
