// Parallel traceEvents parsing, delivered in stream order (see parallel_parse.h).
#include "analysis/parallel_parse.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace opscope::analysis {

// Batches copied out of the stream, and what parsing them said.
struct ParallelEventParser::Chunk {
  struct OwnedBatch {
    std::unique_ptr<char[]> text;  // the batch's array, then JsonStream::kPadding zero bytes
    size_t size = 0;               // of the array
    JsonStream::Batch batch;       // views into `text`
  };
  struct Entry {
    uint64_t offset;  // stream offset of the entry
    uint32_t index;   // into events, or into skips when `skipped`
    bool skipped;
  };
  std::vector<OwnedBatch> batches;
  size_t bytes = 0;
  std::vector<Entry> entries;
  std::vector<EventFields> events;  // views into `batches` and `strings`
  std::vector<std::string> skips;
  // Unescaped strings (simdjson writes them into its parser, which the next batch reuses), in
  // blocks that never move.
  std::vector<std::unique_ptr<char[]>> strings;
  size_t block_size = 0;  // of the last block
  size_t block_used = 0;

  // A copy of `s` that lives as long as the chunk.
  std::string_view Keep(std::string_view s) {
    constexpr size_t kBlock = 64u << 10;
    if (strings.empty() || s.size() > block_size - block_used) {
      block_size = std::max(kBlock, s.size());
      block_used = 0;
      strings.push_back(std::make_unique<char[]>(block_size));
    }
    char* const at = strings.back().get() + block_used;
    std::memcpy(at, s.data(), s.size());
    block_used += s.size();
    return std::string_view(at, s.size());
  }
  bool parsed = false;  // guarded by the parser's mu_
};

// Records a parser's calls into a chunk.
class ParallelEventParser::Recorder final : public EventSink {
 public:
  explicit Recorder(Chunk* chunk) : c_(*chunk) {}
  // The batch being parsed: views into its text stay valid with the chunk.
  void SetBatch(std::string_view text) { text_ = text; }
  void Begin(uint64_t offset) override { offset_ = offset; }
  void Add(const EventFields& event) override {
    c_.entries.push_back({offset_, static_cast<uint32_t>(c_.events.size()), false});
    EventFields& f = c_.events.emplace_back(event);
    for (std::string_view* s :
         {&f.ph, &f.name, &f.cat, &f.bp, &f.scope, &f.pid_text, &f.tid_text}) {
      if (!s->empty() && !InBatch(*s)) *s = c_.Keep(*s);
    }
  }
  void Skip(std::string_view why) override {
    c_.entries.push_back({offset_, static_cast<uint32_t>(c_.skips.size()), true});
    c_.skips.emplace_back(why);
  }

 private:
  bool InBatch(std::string_view s) const {
    return s.data() >= text_.data() && s.data() + s.size() <= text_.data() + text_.size();
  }

  Chunk& c_;
  std::string_view text_;
  uint64_t offset_ = 0;
};

ParallelEventParser::ParallelEventParser(const ImportOptions& options, EventSink* sink, int threads)
    : options_(options),
      sink_(sink),
      threads_(threads < 2 ? 2 : threads),
      max_in_flight_(2 * static_cast<size_t>(threads_)),
      own_parser_(options) {}

ParallelEventParser::~ParallelEventParser() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ParallelEventParser::Submit(const JsonStream::Batch& batch) {
  if (batch.elements.empty()) return;
  if (!filling_) filling_ = std::make_unique<Chunk>();
  Chunk::OwnedBatch owned;
  // A batch cut short by an error has no array text (the parser takes its elements one by one):
  // then the copy covers the elements alone.
  const bool wrapped = !batch.array.empty();
  const std::string_view last = batch.elements.back();
  const char* const base = wrapped ? batch.array.data() : batch.elements.front().data();
  const size_t n =
      wrapped ? batch.array.size() : static_cast<size_t>(last.data() + last.size() - base);
  owned.text = std::make_unique<char[]>(n + JsonStream::kPadding);
  owned.size = n;
  std::memcpy(owned.text.get(), base, n);
  std::memset(owned.text.get() + n, 0, JsonStream::kPadding);
  const char* const copy = owned.text.get();
  owned.batch.array = wrapped ? std::string_view(copy, n) : std::string_view();
  owned.batch.elements.reserve(batch.elements.size());
  for (std::string_view e : batch.elements) {
    owned.batch.elements.emplace_back(copy + (e.data() - base), e.size());
  }
  owned.batch.offsets = batch.offsets;
  filling_->bytes += n;
  filling_->batches.push_back(std::move(owned));
  if (filling_->bytes >= options_.chunk_bytes) Dispatch();
}

void ParallelEventParser::Dispatch() {
  if (!filling_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(filling_.get());
    order_.push_back(std::move(filling_));
    if (order_.size() > peak_in_flight_) peak_in_flight_ = order_.size();
    // Workers start once there is more than one chunk to parse.
    if (workers_.empty() && order_.size() > 1) {
      for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
    }
  }
  work_cv_.notify_one();
  HandOver(false);
  // The bound: wait until a chunk is handed over before reading more.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (order_.size() < max_in_flight_) return;
    }
    HandOver(true);
  }
}

void ParallelEventParser::HandOver(bool need_one) {
  for (;;) {
    std::unique_ptr<Chunk> ready;
    Chunk* help = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (order_.empty()) return;
      if (order_.front()->parsed) {
        ready = std::move(order_.front());
        order_.pop_front();
      } else if (!need_one) {
        return;
      } else if (!queue_.empty()) {
        help = queue_.front();  // parse one here rather than wait
        queue_.pop_front();
      } else {
        done_cv_.wait(lock, [&] { return order_.front()->parsed; });
        continue;
      }
    }
    if (help != nullptr) {
      ParseChunk(help, &own_parser_);
      continue;
    }
    Deliver(*ready);
    need_one = false;
  }
}

void ParallelEventParser::Drain() {
  Dispatch();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (order_.empty()) return;
    }
    HandOver(true);
  }
}

void ParallelEventParser::Deliver(const Chunk& chunk) {
  for (const Chunk::Entry& e : chunk.entries) {
    sink_->Begin(e.offset);
    if (e.skipped) {
      sink_->Skip(chunk.skips[e.index]);
    } else {
      sink_->Add(chunk.events[e.index]);
    }
  }
}

void ParallelEventParser::WorkerLoop() {
  EventParser parser(options_);
  for (;;) {
    Chunk* chunk = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      chunk = queue_.front();
      queue_.pop_front();
    }
    ParseChunk(chunk, &parser);
  }
}

void ParallelEventParser::ParseChunk(Chunk* chunk, EventParser* parser) {
  Recorder recorder(chunk);
  for (const Chunk::OwnedBatch& b : chunk->batches) {
    recorder.SetBatch(std::string_view(b.text.get(), b.size));
    parser->Parse(b.batch, &recorder);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    chunk->parsed = true;
  }
  done_cv_.notify_all();
}

}  // namespace opscope::analysis
