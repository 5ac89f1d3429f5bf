// A child process run as a user runs it, with its output read through a pipe: the tests and
// benchmarks that start the `opscope` binary (e.g. `opscope explore`, which prints its address and
// serves until signalled) use it to wait for a line, find the port and stop it. POSIX only.
// Not thread-safe: one thread owns the object. The destructor kills and reaps a child still
// running.
#ifndef OPSCOPE_TESTS_COMMON_CHILD_PROCESS_H_
#define OPSCOPE_TESTS_COMMON_CHILD_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace opscope::testing {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Runs argv[0] with `argv`. Its stdout goes to the pipe; its stderr too, or to /dev/null when
  // `stderr_to_pipe` is false. started() is false when the pipe or the fork failed; a program
  // that cannot be executed exits with 127.
  explicit ChildProcess(std::vector<std::string> argv, bool stderr_to_pipe = true) {
    // Everything the child needs is made before fork: between fork and exec it only calls
    // async-signal-safe functions, as a multithreaded parent requires.
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    int fds[2];
    if (argv.empty() || pipe(fds) != 0) return;
    const int err = stderr_to_pipe ? fds[1] : open("/dev/null", O_WRONLY);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      if (err >= 0) dup2(err, STDERR_FILENO);
      close(fds[0]);
      close(fds[1]);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    if (!stderr_to_pipe && err >= 0) close(err);
    if (pid_ < 0) {
      close(fds[0]);
      return;
    }
    out_ = fds[0];
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return out_ >= 0; }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

  // Reads output until `done(output())` holds, the pipe closes or `until` passes; returns
  // everything read so far.
  template <typename Done>
  const std::string& ReadUntil(Done done, Clock::time_point until) {
    while (out_ >= 0 && !done(output_) && Clock::now() < until) {
      fd_set set;
      FD_ZERO(&set);
      FD_SET(out_, &set);
      timeval tv{0, 20000};
      if (select(out_ + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(out_, buf, sizeof(buf));
      if (n <= 0) break;
      output_.append(buf, static_cast<size_t>(n));
    }
    return output_;
  }
  const std::string& ReadUntil(std::string_view needle, std::chrono::milliseconds limit) {
    return ReadUntil(
        [needle](const std::string& out) { return out.find(needle) != std::string::npos; },
        Clock::now() + limit);
  }

  // The port of the first "http://127.0.0.1:PORT/" in the output, read until it is there or
  // `until` passes; 0 when none.
  int LocalPort(Clock::time_point until) {
    static constexpr std::string_view kPrefix = "http://127.0.0.1:";
    auto port_at = [](const std::string& out) -> size_t {
      const size_t at = out.find(kPrefix);
      if (at == std::string::npos || out.find('/', at + kPrefix.size()) == std::string::npos) {
        return std::string::npos;
      }
      return at + kPrefix.size();
    };
    ReadUntil([&](const std::string& out) { return port_at(out) != std::string::npos; }, until);
    const size_t at = port_at(output_);
    return at == std::string::npos ? 0 : std::atoi(output_.c_str() + at);
  }

  // Waits for the exit code (-1 when killed by a signal or still running after `limit`). Once the
  // child has exited, returns its code again at once.
  int Wait(std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (pid_ > 0 && !exited_) {
      int status = 0;
      const pid_t got = waitpid(pid_, &status, WNOHANG);
      if (got == pid_ || got < 0) {
        exited_ = true;
        exit_code_ = got == pid_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ReadUntil("\x01", std::chrono::milliseconds(50));
        break;
      }
      if (Clock::now() >= until) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return exited_ ? exit_code_ : -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  std::string output_;
};

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_COMMON_CHILD_PROCESS_H_
