// The compiled-artifact cache (kernel_cache.h): the in-process map and the on-disk store.
#include "compile/kernel_cache.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "compile/cpp_codegen.h"

namespace opscope::compiler {
namespace {

const char* kKeySymbol = "opscope_module_key";

// Loads `so_path` and resolves its kernels into *out; an error when the object is unusable.
Status Load(const std::string& key, const std::string& so_path, int num_kernels,
            std::shared_ptr<CompiledModule>* out) {
  std::unique_ptr<SharedObject> object;
  Status st = SharedObject::Open(so_path, &object);
  if (!st.ok()) return st;
  auto key_fn = reinterpret_cast<const char* (*)()>(object->Symbol(kKeySymbol));
  if (!key_fn || key != key_fn()) {
    return Status::InvalidInput(so_path + " does not hold the module for key " + key, 0, so_path);
  }
  auto module = std::make_shared<CompiledModule>();
  module->key = key;
  for (int k = 0; k < num_kernels; ++k) {
    auto fn = reinterpret_cast<KernelFn>(object->Symbol(KernelSymbol(k)));
    if (!fn) return Status::InvalidInput(so_path + " lacks " + KernelSymbol(k), 0, so_path);
    module->kernels.push_back(fn);
  }
  module->object = std::move(object);
  *out = std::move(module);
  return Status::Ok();
}

}  // namespace

const char* CacheSourceName(CacheSource s) {
  switch (s) {
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    case CacheSource::kCompiled:
      return "compiled";
    case CacheSource::kFailed:
      return "failed";
  }
  return "?";
}

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("OPSCOPE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/opscope/compile";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/opscope/compile";
  return std::filesystem::temp_directory_path().string() + "/opscope-compile";
}

KernelCache& KernelCache::Global() {
  static KernelCache* cache = new KernelCache();
  return *cache;
}

void KernelCache::ClearMemory() {
  std::lock_guard<std::mutex> lock(mu_);
  modules_.clear();
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return modules_.size();
}

CacheLookup KernelCache::GetOrCompile(const std::string& key, const std::string& source,
                                      int num_kernels, const CxxToolchain& toolchain,
                                      const std::string& dir_in, bool use_disk) {
  CacheLookup result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = modules_.find(key);
    if (it != modules_.end()) {
      result.module = it->second;
      result.source = CacheSource::kMemory;
      result.source_path = it->second->source_path;
      return result;
    }
  }
  std::string dir = dir_in.empty() ? DefaultCacheDir() : dir_in;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    result.status =
        Status::IoError("cannot create the compile cache directory " + dir + ": " + ec.message() +
                            " (set OPSCOPE_CACHE_DIR to a writable directory)",
                        dir);
    return result;
  }
  std::string base = dir + "/" + key;
  result.source_path = base + ".cc";
  std::string so_path = base + ".so";
  std::shared_ptr<CompiledModule> module;
  if (use_disk && std::filesystem::exists(so_path)) {
    // A bad object on disk is recompiled below.
    if (Load(key, so_path, num_kernels, &module).ok()) result.source = CacheSource::kDisk;
  }
  if (!module) {
    std::string full =
        source + "\nextern \"C\" const char* " + kKeySymbol + "() { return \"" + key + "\"; }\n";
    Status st = WriteFileAtomically(result.source_path, full);
    if (st.ok()) st = CompileSharedObject(toolchain, result.source_path, so_path, base + ".log");
    if (!st.ok()) {
      result.status = std::move(st);
      return result;
    }
    st = Load(key, so_path, num_kernels, &module);
    if (!st.ok()) {
      result.status =
          Status::Unavailable(st.message() + " (generated file: " + result.source_path + ")");
      return result;
    }
    result.source = CacheSource::kCompiled;
  }
  module->source_path = result.source_path;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = modules_.emplace(key, std::move(module));
  result.module = it->second;
  return result;
}

}  // namespace opscope::compiler
