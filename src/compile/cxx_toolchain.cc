// The system C++ compiler (cxx_toolchain.h): finding it, compiling generated code, loading it.
#include "compile/cxx_toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

extern char** environ;

#ifndef OPSCOPE_SYSTEM_CXX
#define OPSCOPE_SYSTEM_CXX "c++"
#endif

namespace opscope::compiler {
namespace {

std::string UniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  return ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// Runs argv with stdout+stderr to `log_path` (or /dev/null). Returns the exit status, or -1 with
// `*spawn_error` set when the program could not be started.
int Run(const std::vector<std::string>& args, const std::string& log_path, int* spawn_errno) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const char* out = log_path.empty() ? "/dev/null" : log_path.c_str();
  posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *spawn_errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // posix_spawnp may report a missing program through exit status 127 of the child.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    *spawn_errno = ENOENT;
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadHead(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::string line, out;
  for (size_t i = 0; i < max_lines && std::getline(in, line); ++i) out += "\n    " + line;
  return out;
}

std::string QueryVersion(const std::string& compiler) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mu);
  auto it = memo.find(compiler);
  if (it != memo.end()) return it->second;
  std::string log = "/tmp/opscope-cxx-version" + UniqueSuffix();
  int spawn_errno = 0;
  int rc = Run({compiler, "--version"}, log, &spawn_errno);
  std::string version = "unavailable";
  if (rc == 0) {
    std::ifstream in(log);
    std::getline(in, version);
  }
  std::remove(log.c_str());
  memo[compiler] = version;
  return version;
}

#if defined(__x86_64__)
// The highest x86-64 microarchitecture level this CPU runs (v4: AVX-512, v3: AVX2 + FMA, else v2).
// Chosen per host rather than -march=native: the level is part of the flags and so of the cache
// key, so a shared cache directory only hands an object to CPUs that can run it, while each host
// still gets vector code as wide as the hand-written kernels' (which dispatch the same way).
const char* X86Level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return "-march=x86-64-v4";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2")) {
    return "-march=x86-64-v3";
  }
  return "-march=x86-64-v2";
}
#endif

}  // namespace

CxxToolchain CxxToolchain::Current() {
  CxxToolchain t;
  const char* env = std::getenv("OPSCOPE_CXX");
  t.compiler = env && *env ? env : OPSCOPE_SYSTEM_CXX;
  t.flags = {"-O3",
             "-std=c++17",
             "-fPIC",
             "-shared",
             "-fopenmp-simd",
             "-fno-math-errno",
             "-fno-trapping-math",
             "-w"};
#if defined(__x86_64__)
  t.flags.push_back(X86Level());
#endif
  t.version = QueryVersion(t.compiler);
  return t;
}

std::string CxxToolchain::Identity() const {
  std::string s = compiler + " | " + version + " |";
  for (const auto& f : flags) s += " " + f;
  return s;
}

Status CompileSharedObject(const CxxToolchain& toolchain, const std::string& source_path,
                           const std::string& so_path, const std::string& log_path) {
  std::string tmp = so_path + UniqueSuffix();
  std::vector<std::string> args = {toolchain.compiler};
  args.insert(args.end(), toolchain.flags.begin(), toolchain.flags.end());
  args.insert(args.end(), {"-o", tmp, source_path});
  int spawn_errno = 0;
  int rc = Run(args, log_path, &spawn_errno);
  if (rc < 0) {
    return Status::Unavailable(
        "C++ compiler '" + toolchain.compiler + "' could not be run (" +
        std::strerror(spawn_errno) +
        "); set OPSCOPE_CXX to a working compiler. Generated file: " + source_path);
  }
  if (rc != 0) {
    std::remove(tmp.c_str());
    return Status::Unavailable("C++ compiler '" + toolchain.compiler + "' failed (exit " +
                               std::to_string(rc) + ") on generated file " + source_path +
                               " (full log: " + log_path + "):" + ReadHead(log_path, 6));
  }
  if (std::rename(tmp.c_str(), so_path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return Status::IoError(
        "cannot move the compiled object into place at " + so_path + ": " + std::strerror(error),
        so_path);
  }
  return Status::Ok();
}

Status SharedObject::Open(const std::string& path, std::unique_ptr<SharedObject>* out) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return Status::IoError("cannot load " + path + ": " + (e ? e : "unknown dlopen error"), path);
  }
  out->reset(new SharedObject(handle, path));
  return Status::Ok();
}

SharedObject::~SharedObject() {
  if (handle_) ::dlclose(handle_);
}

void* SharedObject::Symbol(const std::string& name) const { return ::dlsym(handle_, name.c_str()); }

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + UniqueSuffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      const int error = errno;
      std::remove(tmp.c_str());
      return Status::IoError("cannot write " + tmp + ": " + std::strerror(error), path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + std::strerror(error),
                           path);
  }
  return Status::Ok();
}

}  // namespace opscope::compiler
