// Neuron Explorer profiles written at test time: write_profile.mjs (npm's parquet-wasm, an
// independent Parquet writer) turns a JSON spec into a profile directory in the documented schema.
// The writer is installed with `npm ci` here when node_modules lacks it. Needs the test target's
// OPSCOPE_NEURON_TEST_DIR (this folder) and OPSCOPE_NEURON_SCHEMA_REFERENCE (the schema document).
#ifndef OPSCOPE_TESTS_IMPORT_NEURON_PROFILE_WRITER_H_
#define OPSCOPE_TESTS_IMPORT_NEURON_PROFILE_WRITER_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace opscope::testing {

// Writes the profile `spec_file` describes into `out`; false, with `why`, when node or the writer
// cannot run.
inline bool WriteNeuronProfile(const std::filesystem::path& spec_file,
                               const std::filesystem::path& out, std::string* why) {
  const std::filesystem::path here = OPSCOPE_NEURON_TEST_DIR;
  if (std::system("node --version > /dev/null 2>&1") != 0) {
    *why = "node is not installed: cannot run the Parquet writer";
    return false;
  }
  if (!std::filesystem::exists(here / "node_modules" / "parquet-wasm" / "package.json")) {
    const std::string npm =
        "cd '" + here.string() + "' && npm ci --no-audit --no-fund > /dev/null 2>&1";
    if (std::system(npm.c_str()) != 0) {
      *why = "npm ci failed in " + here.string();
      return false;
    }
  }
  const std::string cmd = "node '" + (here / "write_profile.mjs").string() + "' '" +
                          std::string(OPSCOPE_NEURON_SCHEMA_REFERENCE) + "' '" +
                          spec_file.string() + "' '" + out.string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    *why = cmd + " failed";
    return false;
  }
  return true;
}

// Writes `text` to `path` as is, creating its folders.
inline void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Writes the profile the spec `spec` (write_profile.mjs's JSON, saved beside `out` as
// `<out>.spec.json`) describes into `out`; false, with `why`, as WriteNeuronProfile.
inline bool WriteNeuronProfileFromSpec(const std::string& spec, const std::filesystem::path& out,
                                       std::string* why) {
  const std::filesystem::path spec_file = out.string() + ".spec.json";
  WriteTextFile(spec_file, spec);
  return WriteNeuronProfile(spec_file, out, why);
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_IMPORT_NEURON_PROFILE_WRITER_H_
