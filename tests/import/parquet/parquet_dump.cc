// parquet_dump: prints Parquet files in the canonical JSON form the conformance test compares
// (canonical_json.h), through opscope's reader.
//
//   parquet_dump [--threads N] FILE...      exit 1 when a file cannot be read (its error on stderr)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/import/parquet/canonical_json.h"

int main(int argc, char** argv) {
  opscope::parquet::ReadOptions options;
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      options.threads = std::atoi(argv[++i]);
      continue;
    }
    std::string json;
    const opscope::Status st = opscope::parquet::CanonicalJson(argv[i], options, &json);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      rc = 1;
      continue;
    }
    std::fwrite(json.data(), 1, json.size(), stdout);
  }
  return rc;
}
