// Invoking the system C++ compiler on generated code and loading the result (cpu backend).
//
// The compiler is $OPSCOPE_CXX when set, else the compiler opscope was built with
// (OPSCOPE_SYSTEM_CXX, defined by CMake). Flags: -O3 -fPIC -shared -fopenmp-simd
// -fno-math-errno, and on x86-64 the highest microarchitecture level the host runs
// (-march=x86-64-v4 with AVX-512, v3 with AVX2 + FMA, else v2). Unlike -march=native the level is
// spelled in the flags, and the flags and the compiler's version string are part of the cache
// key, so a cache directory shared between machines never hands an object to a CPU that cannot
// run it.
//
// Thread safety: all functions may be called from any thread.
#ifndef OPSCOPE_SRC_COMPILE_CXX_TOOLCHAIN_H_
#define OPSCOPE_SRC_COMPILE_CXX_TOOLCHAIN_H_

#include <memory>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope::compiler {

struct CxxToolchain {
  std::string compiler;            // path or name looked up in PATH
  std::vector<std::string> flags;  // without -o and the source
  std::string version;             // first line of `compiler --version`; "unavailable" if none

  // The toolchain compile() uses now (reads $OPSCOPE_CXX on every call; the version is
  // memoized per compiler path).
  static CxxToolchain Current();
  // Text identifying compiler + flags, for the cache key.
  std::string Identity() const;
};

// Compiles `source_path` into the shared object `so_path` (written atomically: a temporary file
// renamed into place). Compiler diagnostics go to `log_path`. Errors: kUnavailable when the
// compiler cannot be run or fails (the message names the compiler, the generated file and the
// first diagnostic lines), kIoError when the object cannot be moved into place.
Status CompileSharedObject(const CxxToolchain& toolchain, const std::string& source_path,
                           const std::string& so_path, const std::string& log_path);

// A dlopen()ed shared object; closed on destruction. Symbols must not be used after that.
class SharedObject {
 public:
  // Loads `path` into *out; kIoError with dlerror's text (file() = path) when loading fails.
  static Status Open(const std::string& path, std::unique_ptr<SharedObject>* out);
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  ~SharedObject();

  void* Symbol(const std::string& name) const;  // nullptr when absent
  const std::string& path() const { return path_; }

 private:
  SharedObject(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// Writes `text` to `path` atomically (temporary file + rename); kIoError naming the file on
// failure, with nothing left behind.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_CXX_TOOLCHAIN_H_
