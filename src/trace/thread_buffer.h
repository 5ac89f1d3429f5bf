// Per-thread record buffers: the hot path's only shared structure (private to src/trace).
//
// A ThreadBuffer has one writer, the thread that owns it. Records go to records[size] and are
// published by a release store of size; the collector reads size with acquire after recording
// stops. `generation` ties a buffer to one recording: a thread whose buffer belongs to an older
// recording takes the slow path (AcquireThreadBuffer) before writing.
#ifndef OPSCOPE_SRC_TRACE_THREAD_BUFFER_H_
#define OPSCOPE_SRC_TRACE_THREAD_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "trace/recorder.h"

namespace opscope::internal {

struct ThreadBuffer {
  std::unique_ptr<Record[]> records;
  uint32_t capacity = 0;
  std::atomic<uint32_t> size{0};
  std::unique_ptr<int64_t[]> shape_words;
  uint32_t shape_capacity = 0;
  std::atomic<uint32_t> shape_used{0};  // written by the owner only
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> shapes_dropped{0};
  std::atomic<uint64_t> generation{0};
  uint64_t tid = 0;
  std::atomic<bool> owner_alive{true};

  // Owner thread only. Never blocks: a full buffer counts the record as dropped.
  void Push(const Record& r) {
    uint32_t n = size.load(std::memory_order_relaxed);
    if (n >= capacity) {
      dropped.store(dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    records[n] = r;
    size.store(n + 1, std::memory_order_release);
  }
  // Owner thread only. Two records that belong together: both are stored, or both are dropped
  // (counted as one lost event).
  void PushPair(const Record& a, const Record& b) {
    uint32_t n = size.load(std::memory_order_relaxed);
    if (capacity < 2 || n > capacity - 2) {
      dropped.store(dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    records[n] = a;
    records[n + 1] = b;
    size.store(n + 2, std::memory_order_release);
  }
};

// The generation of the running recording (0 = none).
extern std::atomic<uint64_t> g_generation;
extern thread_local ThreadBuffer* tl_buffer;

// Slow path: the calling thread's buffer for the running recording, or nullptr if none runs.
ThreadBuffer* AcquireThreadBuffer();

inline ThreadBuffer* CurrentThreadBuffer() {
  ThreadBuffer* b = tl_buffer;
  if (b != nullptr && b->generation.load(std::memory_order_relaxed) ==
                          g_generation.load(std::memory_order_relaxed)) {
    return b;
  }
  return AcquireThreadBuffer();
}

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_TRACE_THREAD_BUFFER_H_
