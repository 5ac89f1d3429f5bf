// ParquetFile: the mapping, the footer, and row-group reads (one thread or a fork-join pool).
#include "import/parquet/parquet_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "base/parallel_for.h"
#include "import/parquet/column_reader.h"
#include "import/parquet/thrift_decode.h"

namespace opscope::parquet {

struct ParquetFile::Impl {
  std::string name;
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  void* mapping = nullptr;  // owned when the file was mapped
  uint64_t data_end = 0;    // where the footer starts
  ::parquet::FileMetaData meta;
  Schema schema;
  std::vector<std::pair<std::string, std::string>> key_values;

  ~Impl() {
    if (mapping != nullptr) munmap(mapping, size);
  }
  Status ParseFooter();
};

namespace {

constexpr uint64_t kMagicBytes = 4;

Status FooterError(const std::string& name, uint64_t offset, const std::string& why) {
  return Status::InvalidInput("footer at byte " + std::to_string(offset) + ": " + why, offset)
      .InFile(name);
}

}  // namespace

Status ParquetFile::Impl::ParseFooter() {
  if (size < 2 * kMagicBytes + 4) {
    return Status::InvalidInput("not a Parquet file: " + std::to_string(size) + " bytes", 0)
        .InFile(name);
  }
  const uint8_t* tail = data + size - kMagicBytes;
  if (std::memcmp(tail, "PARE", 4) == 0) {
    return Status::InvalidInput(
               "the footer is encrypted (Parquet modular encryption is not supported)", size - 4)
        .InFile(name);
  }
  if (std::memcmp(tail, "PAR1", 4) != 0 || std::memcmp(data, "PAR1", 4) != 0) {
    return Status::InvalidInput("not a Parquet file (no PAR1 magic at its start and end)", 0)
        .InFile(name);
  }
  uint32_t footer_len = 0;
  std::memcpy(&footer_len, data + size - 8, 4);
  if (footer_len > size - 2 * kMagicBytes - 4) {
    return FooterError(name, size - 8,
                       "footer length " + std::to_string(footer_len) + " exceeds the file");
  }
  data_end = size - 8 - footer_len;
  if (std::string why = DecodeFileMetaData(data + data_end, footer_len, &meta); !why.empty()) {
    return FooterError(name, data_end, why);
  }
  if (std::string why = BuildSchema(meta.schema, &schema); !why.empty()) {
    return FooterError(name, data_end, "schema: " + why);
  }
  for (size_t i = 0; i < meta.row_groups.size(); ++i) {
    const ::parquet::RowGroup& rg = meta.row_groups[i];
    if (rg.num_rows < 0) {
      return FooterError(
          name, data_end,
          "row group " + std::to_string(i) + " has " + std::to_string(rg.num_rows) + " rows");
    }
    if (rg.columns.size() != static_cast<size_t>(schema.num_columns())) {
      return FooterError(name, data_end,
                         "row group " + std::to_string(i) + " has " +
                             std::to_string(rg.columns.size()) + " column chunks, the schema " +
                             std::to_string(schema.num_columns()) + " columns");
    }
  }
  for (const ::parquet::KeyValue& kv : meta.key_value_metadata) {
    key_values.emplace_back(kv.key, kv.__isset.value ? kv.value : std::string());
  }
  return Status::Ok();
}

ParquetFile::ParquetFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetFile::~ParquetFile() = default;

Status ParquetFile::Open(const std::string& path, std::unique_ptr<ParquetFile>* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string why = std::strerror(err);
    return err == ENOENT ? Status::NotFound(path + ": " + why, path)
                         : Status::IoError(path + ": " + why, path);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path + ": not a regular file", path);
  }
  auto impl = std::make_unique<Impl>();
  impl->name = path;
  impl->size = static_cast<uint64_t>(st.st_size);
  if (impl->size > 0) {
    void* m = mmap(nullptr, impl->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Status::IoError(path + ": cannot map the file: " + std::strerror(err), path);
    }
    impl->mapping = m;
    impl->data = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  try {
    if (Status s = impl->ParseFooter(); !s.ok()) return s;
  } catch (const std::bad_alloc&) {
    return Status::InvalidInput("out of memory reading the footer", 0).InFile(path);
  }
  out->reset(new ParquetFile(std::move(impl)));
  return Status::Ok();
}

Status ParquetFile::OpenBuffer(std::string name, const uint8_t* data, size_t size,
                               std::unique_ptr<ParquetFile>* out) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->data = data;
  impl->size = size;
  try {
    if (Status s = impl->ParseFooter(); !s.ok()) return s;
  } catch (const std::bad_alloc&) {
    return Status::InvalidInput("out of memory reading the footer", 0).InFile(impl->name);
  }
  out->reset(new ParquetFile(std::move(impl)));
  return Status::Ok();
}

const std::string& ParquetFile::name() const { return impl_->name; }
uint64_t ParquetFile::size() const { return impl_->size; }
const Schema& ParquetFile::schema() const { return impl_->schema; }
int64_t ParquetFile::num_rows() const { return impl_->meta.num_rows; }
int ParquetFile::num_row_groups() const { return static_cast<int>(impl_->meta.row_groups.size()); }
int64_t ParquetFile::row_group_rows(int row_group) const {
  return impl_->meta.row_groups[row_group].num_rows;
}
const std::string& ParquetFile::created_by() const { return impl_->meta.created_by; }
const std::vector<std::pair<std::string, std::string>>& ParquetFile::key_value_metadata() const {
  return impl_->key_values;
}

Status ParquetFile::ReadRowGroup(int row_group, std::span<const int> columns,
                                 const ReadOptions& options, RowGroupData* out) const {
  if (row_group < 0 || row_group >= num_row_groups()) {
    return Status::InvalidArgument(impl_->name + ": no row group " + std::to_string(row_group));
  }
  const Schema& schema = impl_->schema;
  out->row_group = row_group;
  out->num_rows = row_group_rows(row_group);
  // The columns of an earlier read are reused when they are the same ones (their memory is
  // already faulted in).
  bool same = out->columns.size() == columns.size();
  for (size_t i = 0; same && i < columns.size(); ++i) {
    same = out->columns[i].descriptor().index == columns[i];
  }
  if (!same) out->columns.clear();
  const ::parquet::RowGroup& rg = impl_->meta.row_groups[row_group];
  uint64_t decoded = 0;
  ChunkSource source{&impl_->name, impl_->data,   kMagicBytes, impl_->data_end,
                     row_group,    out->num_rows, &options,    &decoded};
  try {
    out->columns.reserve(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      const int c = columns[i];
      if (c < 0 || c >= schema.num_columns()) {
        out->columns.clear();
        return Status::InvalidArgument(impl_->name + ": no column " + std::to_string(c));
      }
      const bool indexed = std::find(options.dictionary_index_columns.begin(),
                                     options.dictionary_index_columns.end(),
                                     c) != options.dictionary_index_columns.end();
      if (same) {
        out->columns[i].Reset(&schema.column(c), indexed);
      } else {
        out->columns.emplace_back(&schema.column(c), indexed);
      }
      ColumnData& data = out->columns[i];
      if (Status st = ReadColumnChunk(source, rg.columns[c], schema.column(c), &data); !st.ok()) {
        out->columns.clear();
        return st;
      }
    }
  } catch (const std::bad_alloc&) {
    out->columns.clear();
    return Status::InvalidInput(
               "row group " + std::to_string(row_group) + ": out of memory decoding its columns", 0)
        .InFile(impl_->name);
  }
  return Status::Ok();
}

Status ParquetFile::ReadRowGroups(std::span<const int> columns, const ReadOptions& options,
                                  const RowGroupConsumer& consume) const {
  const auto n = static_cast<size_t>(num_row_groups());
  std::vector<Status> errors(n);  // each slot written by the thread that ran its row group
  std::atomic<bool> failed{false};
  // At most one RowGroupData per thread, reused from row group to row group.
  std::mutex mu;
  std::vector<std::unique_ptr<RowGroupData>> pool;
  internal::ParallelFor(options.threads, n, [&](size_t i) {
    if (failed.load(std::memory_order_relaxed)) return;
    std::unique_ptr<RowGroupData> rg;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!pool.empty()) {
        rg = std::move(pool.back());
        pool.pop_back();
      }
    }
    if (!rg) rg = std::make_unique<RowGroupData>();
    Status st = ReadRowGroup(static_cast<int>(i), columns, options, rg.get());
    if (st.ok()) st = consume(*rg);
    {
      std::lock_guard<std::mutex> lock(mu);
      pool.push_back(std::move(rg));
    }
    if (!st.ok()) {
      errors[i] = std::move(st);
      failed.store(true, std::memory_order_relaxed);
    }
  });
  for (Status& st : errors) {
    if (!st.ok()) return std::move(st);
  }
  return Status::Ok();
}

}  // namespace opscope::parquet
