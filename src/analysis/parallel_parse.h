// Parsing traceEvents on several threads with the same result as one.
//
// The reading thread hands batches of complete events (JsonStream::ReadElements) to Submit, which
// copies them into chunks of about ImportOptions::chunk_bytes. Worker threads parse whole chunks,
// each with its own EventParser, into a record of what the parser said: for every entry, its offset
// and its fields or the reason it was skipped. The records are handed to the sink in stream order
// on the calling thread, so the sink (the translator: interning, tracks, staging) sees exactly the
// calls a single-threaded parse makes, in the same order: same model, same warnings, same string
// ids.
//
// At most 2 x threads chunks are in flight (queued, being parsed, or parsed and not yet handed
// over); Submit blocks past that, and while it waits the calling thread parses queued chunks
// itself. Workers start with the second chunk, so a small trace runs on the calling thread alone.
//
// Not thread-safe: Submit and Drain are called from one thread; the sink is called only from it.
#ifndef OPSCOPE_ANALYSIS_PARALLEL_PARSE_H_
#define OPSCOPE_ANALYSIS_PARALLEL_PARSE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "analysis/event_parser.h"
#include "analysis/json_stream.h"
#include "opscope/analysis.h"

namespace opscope::analysis {

class ParallelEventParser {
 public:
  // `threads` >= 2 counts the calling thread: threads - 1 workers. `options` and `sink` must
  // outlive the parser.
  ParallelEventParser(const ImportOptions& options, EventSink* sink, int threads);
  ParallelEventParser(const ParallelEventParser&) = delete;
  ParallelEventParser& operator=(const ParallelEventParser&) = delete;
  // Stops and joins the workers; chunks not yet handed over are dropped (call Drain first).
  ~ParallelEventParser();

  // Takes a copy of `batch` (its views may change after the call).
  void Submit(const JsonStream::Batch& batch);
  // Parses everything submitted and hands it to the sink; returns once all of it is handed over.
  void Drain();

  size_t chunk_bytes() const { return options_.chunk_bytes; }
  // Most chunks in flight at once (for tests and the memory bound).
  size_t max_in_flight() const { return max_in_flight_; }
  size_t peak_in_flight() const { return peak_in_flight_; }

 private:
  struct Chunk;
  class Recorder;

  // Sends the chunk being filled to the workers.
  void Dispatch();
  // Hands over parsed chunks at the front of the order; with `need_one`, waits (parsing queued
  // chunks meanwhile) until at least the front one is handed over.
  void HandOver(bool need_one);
  void Deliver(const Chunk& chunk);
  void WorkerLoop();
  void ParseChunk(Chunk* chunk, EventParser* parser);

  const ImportOptions& options_;
  EventSink* sink_;
  int threads_;
  size_t max_in_flight_;
  size_t peak_in_flight_ = 0;
  EventParser own_parser_;          // the calling thread's, when it helps
  std::unique_ptr<Chunk> filling_;  // the chunk Submit is filling
  std::mutex mu_;
  std::condition_variable work_cv_;           // a chunk was queued, or stop_
  std::condition_variable done_cv_;           // a chunk was parsed
  std::deque<std::unique_ptr<Chunk>> order_;  // in flight, in stream order (guarded by mu_)
  std::deque<Chunk*> queue_;                  // not yet taken by a parser (guarded by mu_)
  bool stop_ = false;                         // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PARALLEL_PARSE_H_
