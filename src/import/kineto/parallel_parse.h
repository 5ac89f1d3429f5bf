// Parsing and translating traceEvents on several threads with the same result as one.
//
// The reading thread hands batches of complete events (JsonStream::ReadElements) to Submit, which
// copies them into chunks of about ImportOptions::chunk_bytes. Chunks are parsed and translated
// whole, each by one thread with its own EventParser and ChunkTranslator, into chunk-local records
// (chunk_translation.h). One hand-over thread merges the chunks into the trace model
// (EventTranslator::Merge) in stream order: local string ids, tracks and arg handles become the
// trace's in the order a one-thread import creates them, and warnings get their global entry
// index, so the result is the same for every thread count. The merge is a remap and a copy; the
// translation (numbers, names, shapes, tracks) runs on every thread.
//
// With `threads` = N: the reading thread, the hand-over thread and N - 2 parse workers, and every
// thread that is not busy takes the next piece of work, so N threads share it on N cores. The
// reading thread reads ahead until the in-flight bound is hit, and only then works: it merges the
// next chunk in order if it is parsed and no thread is merging, else parses the oldest waiting
// chunk, else waits. The hand-over thread and the parse workers do the same without reading: any
// thread may take the merge, so a thread that is descheduled (a core shared with another process)
// holds up the merge only while it is inside one. One thread at a time merges, in stream order
// (`merging_`). No thread spins or sleeps while work it may take waits; a thread with nothing to
// take spins for up to kSpinBeforeSleep before it sleeps, when each thread has a core.
// Threads start with the second chunk, so a small trace runs on the calling thread alone, and
// parse workers one per kParseWorkerChunks chunks of JSON read (8 MiB with 256 KiB chunks): each
// holds a parser, a translator, a malloc arena and, once args are packed, a zstd context, a few
// hundred KiB that would be a visible share of a trace of a few MB (a 15 MB trace runs at most one
// parse worker whatever N is). A
// thread that cannot be started is done without: its work falls to the others (the merge to the
// reading thread, once the bound is hit).
//
// At most one chunk more than the threads running (N + 1 once all run) is in flight (queued, being
// parsed, parsed and not yet handed over, or being handed over); Submit blocks past that, parsing
// waiting chunks meanwhile. Handed-over chunks are kept for reuse, so the chunks' memory is bounded
// by N + 2 chunks (2 x N in flight put the 15 MB fixture's peak memory at 0.60x its JSON size at 2
// threads; N + 1 at 0.53x). A chunk is sent on at ImportOptions::chunk_bytes, or sooner while
// little JSON has been read (ChunkBytesNow): then all chunks together stay near 1/20 of the JSON
// read, at any thread count.
//
// Args: once kPackArgsChunks x `threads` chunks of JSON are read (8 MiB per thread with 256 KiB
// chunks), the thread that parses a chunk also copies its args into arg store blocks and
// compresses them (ArgPacker), so that the merge only links the blocks; before that the merge
// stores them one by one, as one thread does. Each packing thread holds a zstd context and two
// 64 KiB buffers (~0.4 MiB), which the threshold keeps under 1/20 of the JSON read; the handles
// and texts are the same either way.
//
// An exception in any thread (std::bad_alloc above all) stops the others and is rethrown on the
// reading thread by the next Submit or Drain, so the importer reports it like one on one thread.
//
// Not thread-safe: Submit and Drain are called from one thread. The translator's Merge is called
// from one thread at a time (the hand-over thread, or the reading thread); once Drain returns, all
// calls to it happen-before Drain's return.
#ifndef OPSCOPE_IMPORT_KINETO_PARALLEL_PARSE_H_
#define OPSCOPE_IMPORT_KINETO_PARALLEL_PARSE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "import/kineto/chunk_translation.h"
#include "import/kineto/event_parser.h"
#include "import/kineto/event_translator.h"
#include "import/kineto/json_stream.h"
#include "opscope/import.h"

namespace opscope::import {

class ParallelEventParser {
 public:
  // The least a chunk holds before it is sent on (unless ImportOptions::chunk_bytes is less).
  static constexpr size_t kMinChunkBytes = size_t{32} << 10;
  // Chunks of JSON per thread read before args are packed on the parsing threads (see above).
  static constexpr size_t kPackArgsChunks = 32;
  // Chunks of JSON read per parse worker started (see above).
  static constexpr uint64_t kParseWorkerChunks = 32;
  // How long a thread that runs out of work spins (watching for a change, the lock released)
  // before it sleeps on a condition variable, when every thread has a core of its own. A chunk
  // takes tens to a few hundred microseconds to read, parse or merge, so most waits end within
  // this. A sleeping thread is woken onto the waker's core by the scheduler often enough to
  // matter: on the 2-core VM, perf sched showed both import threads taking turns on one core for
  // milliseconds while the other core idled, and 2 threads imported the 15 MB fixture no faster
  // than 1 (docs/import.md, "Waking threads").
  static constexpr std::chrono::microseconds kSpinBeforeSleep{200};

  // `threads` >= 2 counts the calling thread. `start_after_bytes`: the document reader parses
  // events on its own thread until that much JSON is read (threads do not pay on small traces).
  // `adaptive` (the default thread count): `threads` is the most to use; how many are used is
  // decided when start_after_bytes is reached, from the machine's runnable threads sampled once
  // per MiB read until then (ResolveDefaultThreads); if that is 1, no thread is started and the
  // whole import runs on the reading thread, exactly as with one thread.
  // `options` and `translator` must outlive the parser.
  ParallelEventParser(const ImportOptions& options, EventTranslator* translator, int threads,
                      uint64_t start_after_bytes = 0, bool adaptive = false);
  ParallelEventParser(const ParallelEventParser&) = delete;
  ParallelEventParser& operator=(const ParallelEventParser&) = delete;
  // Stops and joins the threads; chunks not yet handed over are dropped (call Drain first).
  ~ParallelEventParser();

  // Takes a copy of `batch` (its views may change after the call). Rethrows an exception raised
  // on another thread.
  void Submit(const JsonStream::Batch& batch);
  // Parses everything submitted and hands it to the sink; returns once all of it is handed over.
  // Rethrows an exception raised on another thread.
  void Drain();

  size_t chunk_bytes() const { return options_.chunk_bytes; }
  uint64_t start_after_bytes() const { return start_after_bytes_; }
  // Called by the document reader for each batch it parses itself, with the stream offset after
  // it: true once events go to Submit from this batch on (never, if the adaptive count was 1).
  bool StartsAt(uint64_t offset);
  // The threads this import uses (1 when the adaptive count declined threads); Finalize's count.
  int threads_used() const { return declined_ ? 1 : threads_; }
  // Most chunks in flight at once (for tests and the memory bound).
  size_t max_in_flight() const { return max_in_flight_; }
  size_t peak_in_flight() const { return peak_in_flight_; }
  // Threads started besides the calling thread (0 until the second chunk).
  size_t threads_started() const { return workers_.size(); }

 private:
  struct Chunk;
  // What each thread parses and translates with.
  struct Worker {
    explicit Worker(const ImportOptions& options) : parser(options), translator(options) {}
    EventParser parser;
    ChunkTranslator translator;
    ArgPacker packer;
  };

  // Sends the chunk being filled on, then works (parses, hands over) until fewer than the bound
  // are in flight.
  void Dispatch();
  // The size at which the chunk being filled is sent on: ImportOptions::chunk_bytes, less while
  // little JSON has been read (see the memory bound above).
  size_t ChunkBytesNow() const;
  // Starts the hand-over thread, and the parse workers the JSON read so far allows. Caller holds
  // mu_.
  void StartThreads();
  // Chunks in flight before Submit blocks: one more than the threads running, counting the
  // reading thread, and at most max_in_flight_. Caller holds mu_.
  size_t InFlightLimit() const;
  // The reading thread's share while it waits for `done` (checked under mu_): merge the next
  // chunk when it is parsed and nobody merges, else parse the oldest waiting chunk, else wait.
  template <typename Done>
  void WorkUntil(Done done);
  // Waits on `cv` under `lock` until `ready()`. A thread about to sleep first spins for up to
  // spin_ with the lock released, watching changes_ (see kSpinBeforeSleep).
  template <typename Ready>
  void Wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Ready ready);
  // Records a change of the shared state (a chunk queued, parsed or merged, stop_, error_) for
  // spinning threads. Caller holds mu_ and notifies the condition variables after.
  void Changed() { changes_.fetch_add(1, std::memory_order_relaxed); }
  // The next chunk in order is parsed and no thread merges it. Caller holds mu_.
  bool CanMerge() const;
  // Takes the merge of the next chunk in order if CanMerge, else the oldest waiting chunk to
  // parse; false if neither. Caller holds mu_.
  bool TakeWork(Chunk** parse, std::unique_ptr<Chunk>* merge);
  // Parses `parse`, or merges `merge` and keeps it for reuse. Called without mu_.
  void Work(Chunk* parse, std::unique_ptr<Chunk> merge, Worker* worker);
  void HandOverLoop();
  void WorkerLoop();
  void ParseChunk(Chunk* chunk, Worker* worker);
  // Runs `body` on a thread; an exception from it is kept for the reading thread and stops all.
  template <typename Body>
  void Guarded(Body body);

  const ImportOptions& options_;
  EventTranslator* translator_;
  int threads_;
  uint64_t start_after_bytes_;
  bool adaptive_;
  bool declined_ = false;    // the adaptive count was 1: no thread is started
  double runnable_sum_ = 0;  // RunnableNow samples while the reading thread parses alone
  int runnable_samples_ = 0;
  uint64_t next_sample_ = 0;  // stream offset of the next sample
  size_t max_in_flight_;
  uint64_t pack_args_after_;  // JSON bytes read before chunks pack their args
  // kSpinBeforeSleep, or 0 when there are more threads than cores (a spinning thread would take
  // the core of one with work).
  std::chrono::nanoseconds spin_;
  size_t peak_in_flight_ = 0;
  size_t dispatched_ = 0;
  uint64_t json_read_ = 0;          // stream offset of the end of the last batch submitted
  Worker own_;                      // the reading thread's
  std::unique_ptr<Chunk> filling_;  // the chunk Submit is filling
  std::mutex mu_;
  // Parse workers: a chunk was queued, the next chunk in order can be merged, or stop_ / error_.
  std::condition_variable work_cv_;
  // The reading and hand-over threads: a chunk was queued, parsed or merged, or stop_ / error_.
  std::condition_variable state_cv_;
  // In flight, in stream order, not yet taken for merging (guarded by mu_).
  std::deque<std::unique_ptr<Chunk>> order_;
  std::deque<Chunk*> queue_;                  // not yet taken by a parser (guarded by mu_)
  std::vector<std::unique_ptr<Chunk>> free_;  // handed over, kept for reuse (guarded by mu_)
  size_t in_flight_ = 0;                      // order_ plus the chunk being merged (guarded by mu_)
  bool all_started_ = false;  // every thread started, or a start failed (guarded by mu_)
  bool merging_ = false;      // a thread merges the chunk taken from order_ (guarded by mu_)
  bool stop_ = false;         // guarded by mu_
  std::exception_ptr error_;  // the first exception on another thread (guarded by mu_)
  std::atomic<uint64_t> changes_{0};  // written under mu_, read by spinning threads without it
  std::vector<std::thread> workers_;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_PARALLEL_PARSE_H_
