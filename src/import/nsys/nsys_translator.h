// Nsight Systems' tables turned into the trace model (docs/formats.md, "Nsight Systems"):
//
//   CUPTI_ACTIVITY_KIND_RUNTIME   -> runtime calls (cuda*; other cu* calls as driver calls) on the
//                                    host thread of their globalTid, with their correlationId
//   CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET
//                                 -> kernels / memcpys / memsets on device stream tracks (a
//                                    process per deviceId, a track per streamId), each carrying
//                                    the correlationId that links it to its runtime call
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> sync ranges on their stream, linked the same way
//   NVTX_EVENTS                   -> push/pop and start/end ranges as cpu ops on their thread
//                                    (the level key_averages groups by: what the program
//                                    annotated, e.g. PyTorch's emit_nvtx op names), nested by
//                                    Finalize; marks as instants; thread names (nvtxNameOsThread)
//   StringIds, ThreadNames, PROCESSES -> names; TARGET_INFO_GPU -> deviceProperties;
//   TARGET_INFO_SESSION_START_TIME -> the base time; EXPORT_META_DATA -> the export's version
//
// Global ids are decoded as nsys defines them: pid = (globalTid / 0x1000000) % 0x1000000, tid =
// globalTid % 0x1000000. A thread named "MPI Rank N" (nsys's MPI tracing names it so) gives the
// trace's rank (distributedInfo), which the job layer reads.
//
// Not thread-safe; the database must outlive the translator.
#ifndef OPSCOPE_IMPORT_NSYS_NSYS_TRANSLATOR_H_
#define OPSCOPE_IMPORT_NSYS_NSYS_TRANSLATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/import_log.h"
#include "import/nsys/sqlite_tables.h"
#include "opscope/import.h"
#include "opscope/trace.h"

namespace opscope::import::nsys {

// "MPI Rank N" (the name nsys's MPI tracing gives a rank's thread) -> N; -1 for other names.
int RankInThreadName(std::string_view name);

class NsysTranslator {
 public:
  NsysTranslator(const SqliteDatabase& db, Trace* trace, const ImportOptions& options,
                 ImportLog* log)
      : db_(db), trace_(trace), options_(options), log_(log) {}

  // Reads every table the reader takes; a table that fails stops there (its rows before the
  // failure stay) and the others are still read. Returns the first error.
  Status ReadAll();

 private:
  Status ReadStrings();
  Status ReadExportMetadata();
  Status ReadNames();
  Status ReadGpus();
  Status ReadNvtx();
  Status ReadRuntime();
  Status ReadKernels();
  Status ReadMemcpys();
  Status ReadMemsets();
  Status ReadSyncs();
  void Finish();

  std::string_view String(int64_t id) const;
  uint32_t HostThread(int64_t global_tid);
  uint32_t DeviceStream(int64_t device, int64_t stream);
  void AddSlice(Slice s, const std::string& args);
  // A row without a usable start and end: warned about and skipped.
  bool Times(const Table& t, const Row& row, int start, int end, int64_t* ts, int64_t* dur);
  bool KeepArgs(ActivityKind kind, StringId name);

  const SqliteDatabase& db_;
  Trace* trace_;
  const ImportOptions& options_;
  ImportLog* log_;
  std::unordered_map<int64_t, std::string> strings_;                     // StringIds
  std::unordered_map<int64_t, std::string> processes_;                   // globalPid -> name
  std::unordered_map<int64_t, std::string> threads_;                     // globalTid -> name
  std::unordered_map<int64_t, uint32_t> host_processes_, host_threads_;  // -> trace index
  std::map<int64_t, uint32_t> devices_;                                  // deviceId -> process
  std::map<std::pair<int64_t, int64_t>, uint32_t> streams_;              // -> track
  std::map<int64_t, std::string> gpu_names_;                             // deviceId -> name
  std::map<std::pair<uint8_t, StringId>, bool> keep_args_;
  std::vector<std::string> device_properties_;
  std::vector<int> ranks_;  // from "MPI Rank N" thread names
};

}  // namespace opscope::import::nsys

#endif  // OPSCOPE_IMPORT_NSYS_NSYS_TRANSLATOR_H_
