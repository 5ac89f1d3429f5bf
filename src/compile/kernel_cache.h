// The compiled-artifact cache of the cpu backend: in memory (per process) and on disk (shared by
// processes).
//
// A module is keyed by a hash of the printed graph (which includes input shapes, strides,
// dtypes and devices), the backend, and the toolchain identity (compiler version + flags) and
// opscope's code generator version. On disk, <dir>/<key>.cc is the generated source,
// <dir>/<key>.so the compiled object and <dir>/<key>.log the compiler's output. A second process
// with the same key loads <key>.so without compiling. The default directory is
// $OPSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/opscope/compile, else ~/.cache/opscope/compile.
//
// Thread safety: KernelCache is internally synchronized.
#ifndef OPSCOPE_SRC_COMPILE_KERNEL_CACHE_H_
#define OPSCOPE_SRC_COMPILE_KERNEL_CACHE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compile/cxx_toolchain.h"
#include "opscope/status.h"

namespace opscope::compiler {

using KernelFn = void (*)(const float* const* in, float* const* out);

// Bumped whenever generated code changes meaning, so stale objects are never reused.
inline constexpr const char* kCodegenVersion = "opscope-cpp-codegen-1";

struct CompiledModule {
  std::string key;
  std::string source_path;
  std::unique_ptr<SharedObject> object;
  std::vector<KernelFn> kernels;
};

enum class CacheSource { kMemory, kDisk, kCompiled, kFailed };
const char* CacheSourceName(CacheSource s);

struct CacheLookup {
  std::shared_ptr<const CompiledModule> module;  // null when kFailed
  CacheSource source = CacheSource::kFailed;
  Status status;            // for kFailed: what went wrong, naming the generated file
  std::string source_path;  // the generated .cc
};

std::string DefaultCacheDir();

class KernelCache {
 public:
  // The process's cache (compile() uses it). ClearMemory() resets it, for tests.
  static KernelCache& Global();

  // Returns the module for `key`, loading <dir>/<key>.so or compiling `source` (num_kernels
  // functions opscope_kernel_0..N-1) when needed. `dir` empty = DefaultCacheDir().
  CacheLookup GetOrCompile(const std::string& key, const std::string& source, int num_kernels,
                           const CxxToolchain& toolchain, const std::string& dir,
                           bool use_disk = true);
  void ClearMemory();
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const CompiledModule>> modules_;
};

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_KERNEL_CACHE_H_
