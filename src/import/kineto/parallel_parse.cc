// Parallel traceEvents parsing, delivered in stream order (see parallel_parse.h).
#include "import/kineto/parallel_parse.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "base/cores.h"
#include "opscope/import.h"

namespace opscope::import {

// Batches copied out of the stream, and their translation. Chunks are reused (Reset keeps every
// buffer's capacity): fresh memory for each chunk cost a page fault per 4 KiB of records.
struct ParallelEventParser::Chunk {
  struct OwnedBatch {
    std::unique_ptr<char[]> text;  // the batch's array, then JsonStream::kPadding zero bytes
    size_t capacity = 0;           // of `text`
    size_t size = 0;               // of the array
    JsonStream::Batch batch;       // views into `text`
  };
  std::vector<OwnedBatch> batches;  // the first `used_batches` are this chunk's
  size_t used_batches = 0;
  size_t bytes = 0;
  ChunkTranslation translation;  // views into `batches`
  bool pack_args = false;        // the parsing thread packs the args (see kPackArgsChunks)
  bool compress_args = false;    // ... and compresses them (the store's rule, on the JSON read)
  bool parsed = false;           // guarded by the parser's mu_

  // Empties the chunk for reuse, keeping its buffers.
  void Reset() {
    used_batches = 0;
    bytes = 0;
    parsed = false;
  }
  // The next batch slot, with room for `n` bytes of text and the padding.
  OwnedBatch& NextBatch(size_t n) {
    if (used_batches == batches.size()) batches.emplace_back();
    OwnedBatch& b = batches[used_batches++];
    if (b.capacity < n + JsonStream::kPadding) {
      b.capacity = std::max(n + JsonStream::kPadding, size_t{40} << 10);
      b.text = std::make_unique<char[]>(b.capacity);
    }
    b.size = n;
    b.batch.elements.clear();
    return b;
  }
};

ParallelEventParser::ParallelEventParser(const ImportOptions& options, EventTranslator* translator,
                                         int threads, uint64_t start_after_bytes, bool adaptive)
    : options_(options),
      translator_(translator),
      threads_(threads < 2 ? 2 : threads),
      start_after_bytes_(start_after_bytes),
      adaptive_(adaptive),
      max_in_flight_(static_cast<size_t>(threads_) + 1),
      pack_args_after_(uint64_t{kPackArgsChunks} * options.chunk_bytes *
                       static_cast<uint64_t>(threads_)),
      spin_(threads_ <= internal::AffinityCores() ? kSpinBeforeSleep : std::chrono::nanoseconds(0)),
      own_(options) {}

ParallelEventParser::~ParallelEventParser() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    Changed();
  }
  work_cv_.notify_all();
  state_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ParallelEventParser::StartsAt(uint64_t offset) {
  if (!adaptive_) return offset >= start_after_bytes_;
  if (declined_) return false;
  if (offset >= next_sample_) {
    if (const double r = internal::RunnableNow(); r >= 0) {
      runnable_sum_ += r;
      ++runnable_samples_;
    }
    next_sample_ = offset + (uint64_t{1} << 20);
  }
  if (offset < start_after_bytes_) return false;
  const double runnable = runnable_samples_ > 0 ? runnable_sum_ / runnable_samples_ : 1.0;
  const int threads = internal::ResolveDefaultThreads(0, threads_, runnable);
  adaptive_ = false;
  if (threads < 2) {
    declined_ = true;
    start_after_bytes_ = UINT64_MAX;
    return false;
  }
  threads_ = threads;
  max_in_flight_ = static_cast<size_t>(threads_) + 1;
  pack_args_after_ =
      uint64_t{kPackArgsChunks} * options_.chunk_bytes * static_cast<uint64_t>(threads_);
  return true;
}

void ParallelEventParser::Submit(const JsonStream::Batch& batch) {
  if (batch.elements.empty()) return;
  if (!filling_) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      filling_ = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!filling_) filling_ = std::make_unique<Chunk>();
  // A batch cut short by an error has no array text (the parser takes its elements one by one):
  // then the copy covers the elements alone.
  const bool wrapped = !batch.array.empty();
  const std::string_view last = batch.elements.back();
  const char* const base = wrapped ? batch.array.data() : batch.elements.front().data();
  const size_t n =
      wrapped ? batch.array.size() : static_cast<size_t>(last.data() + last.size() - base);
  Chunk::OwnedBatch& owned = filling_->NextBatch(n);
  char* const copy = owned.text.get();
  std::memcpy(copy, base, n);
  std::memset(copy + n, 0, JsonStream::kPadding);
  owned.batch.array = wrapped ? std::string_view(copy, n) : std::string_view();
  for (std::string_view e : batch.elements) {
    owned.batch.elements.emplace_back(copy + (e.data() - base), e.size());
  }
  owned.batch.offsets = batch.offsets;
  filling_->bytes += n;
  json_read_ =
      batch.offsets.empty() ? json_read_ + n : batch.offsets.back() + batch.elements.back().size();
  if (filling_->bytes >= ChunkBytesNow()) Dispatch();
}

size_t ParallelEventParser::ChunkBytesNow() const {
  // Chunks in flight (each ~1.5x its JSON with its translation and batch buffers) stay within
  // about 1/20 of the JSON read so far: a trace of a few MB at 8 threads would otherwise hold
  // 10 full chunks, a third of its size.
  const uint64_t share = json_read_ / (32 * (static_cast<uint64_t>(max_in_flight_) + 1));
  return std::min<size_t>(options_.chunk_bytes,
                          std::max<size_t>(kMinChunkBytes, static_cast<size_t>(share)));
}

void ParallelEventParser::Dispatch() {
  if (filling_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      filling_->pack_args = json_read_ >= pack_args_after_;
      filling_->compress_args = json_read_ > PackedArgs::kCompressAbove;
      queue_.push_back(filling_.get());
      order_.push_back(std::move(filling_));
      ++in_flight_;
      peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
      Changed();
      // Threads start once there is more than one chunk, parse workers as the JSON read grows.
      if (++dispatched_ >= 2 && !all_started_) StartThreads();
    }
    work_cv_.notify_one();
    state_cv_.notify_all();
  }
  WorkUntil([this] { return in_flight_ < InFlightLimit(); });
}

size_t ParallelEventParser::InFlightLimit() const {
  return std::min(max_in_flight_, workers_.size() + 2);
}

void ParallelEventParser::StartThreads() {
  try {
    if (workers_.empty()) workers_.emplace_back([this] { Guarded([this] { HandOverLoop(); }); });
    // Parse workers: one more per kParseWorkerChunks chunks of JSON read.
    while (workers_.size() < static_cast<size_t>(threads_) - 1 &&
           json_read_ >= workers_.size() * kParseWorkerChunks * options_.chunk_bytes) {
      workers_.emplace_back([this] { Guarded([this] { WorkerLoop(); }); });
    }
    all_started_ = workers_.size() + 1 >= static_cast<size_t>(threads_);
  } catch (const std::system_error&) {
    // No more threads to be had (a process or address-space limit): the ones running do the work.
    all_started_ = true;
  }
}

namespace {

// One spin of a waiting loop: tells the core (and a hypervisor) that this thread waits.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

template <typename Ready>
void ParallelEventParser::Wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                               Ready ready) {
  if (ready()) return;
  if (spin_.count() > 0) {
    const uint64_t seen = changes_.load(std::memory_order_relaxed);
    lock.unlock();
    const auto until = std::chrono::steady_clock::now() + spin_;
    for (uint32_t i = 1; changes_.load(std::memory_order_relaxed) == seen; ++i) {
      CpuRelax();
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
    }
    lock.lock();
  }
  cv.wait(lock, ready);
}

bool ParallelEventParser::CanMerge() const {
  return !merging_ && !order_.empty() && order_.front()->parsed;
}

template <typename Done>
void ParallelEventParser::WorkUntil(Done done) {
  for (;;) {
    Chunk* parse = nullptr;
    std::unique_ptr<Chunk> merge;
    {
      std::unique_lock<std::mutex> lock(mu_);
      Wait(lock, state_cv_, [&] { return error_ || done() || CanMerge() || !queue_.empty(); });
      if (error_) std::rethrow_exception(error_);
      if (done()) return;
      if (!TakeWork(&parse, &merge)) continue;
    }
    Work(parse, std::move(merge), &own_);
  }
}

bool ParallelEventParser::TakeWork(Chunk** parse, std::unique_ptr<Chunk>* merge) {
  if (CanMerge()) {
    *merge = std::move(order_.front());
    order_.pop_front();
    merging_ = true;
    return true;
  }
  if (queue_.empty()) return false;
  *parse = queue_.front();
  queue_.pop_front();
  return true;
}

void ParallelEventParser::Work(Chunk* parse, std::unique_ptr<Chunk> merge, Worker* worker) {
  if (parse != nullptr) {
    ParseChunk(parse, worker);
    return;
  }
  translator_->Merge(merge->translation);
  merge->Reset();
  bool can_merge = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    merging_ = false;
    --in_flight_;
    free_.push_back(std::move(merge));
    Changed();
    can_merge = CanMerge();
  }
  state_cv_.notify_all();
  if (can_merge) work_cv_.notify_one();
}

void ParallelEventParser::Drain() {
  Dispatch();
  WorkUntil([this] { return in_flight_ == 0; });
}

template <typename Body>
void ParallelEventParser::Guarded(Body body) {
  try {
    body();
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      Changed();
    }
    work_cv_.notify_all();
    state_cv_.notify_all();
  }
}

void ParallelEventParser::HandOverLoop() {
  Worker worker(options_);
  for (;;) {
    Chunk* parse = nullptr;
    std::unique_ptr<Chunk> merge;
    {
      std::unique_lock<std::mutex> lock(mu_);
      Wait(lock, state_cv_, [&] { return stop_ || error_ || CanMerge() || !queue_.empty(); });
      if (stop_ || error_) return;
      if (!TakeWork(&parse, &merge)) continue;
    }
    Work(parse, std::move(merge), &worker);
  }
}

void ParallelEventParser::WorkerLoop() {
  Worker worker(options_);
  for (;;) {
    Chunk* parse = nullptr;
    std::unique_ptr<Chunk> merge;
    {
      std::unique_lock<std::mutex> lock(mu_);
      Wait(lock, work_cv_, [&] { return stop_ || error_ || CanMerge() || !queue_.empty(); });
      if (stop_ || error_) return;
      if (!TakeWork(&parse, &merge)) continue;
    }
    Work(parse, std::move(merge), &worker);
  }
}

void ParallelEventParser::ParseChunk(Chunk* chunk, Worker* worker) {
  worker->translator.Start(&chunk->translation);
  for (size_t i = 0; i < chunk->used_batches; ++i) {
    worker->parser.Parse(chunk->batches[i].batch, &worker->translator);
  }
  // The args' copy and compression, off the merging thread.
  ChunkTranslation& t = chunk->translation;
  if (chunk->pack_args && !t.args.empty()) {
    worker->packer.Pack(t.args, chunk->compress_args, &t.packed_args);
  }
  bool can_merge = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    chunk->parsed = true;
    can_merge = CanMerge();
    Changed();
  }
  state_cv_.notify_all();
  if (can_merge) work_cv_.notify_one();
  // The page faults of the staging the merge writes next, here rather than in the merge.
  translator_->PrepareMerge();
}

}  // namespace opscope::import
